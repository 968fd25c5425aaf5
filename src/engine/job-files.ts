import { constants, createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { JobFileChunkStore } from '../store/cluster-store.ts';

/** A job file name an agent may report: a plain name, never a path. Checked again here: agents are not trusted. */
export const isSafeFileName = (name: string): boolean =>
  name.length > 0 && Buffer.byteLength(name) <= 255 && !name.startsWith('.') && !/[/\\\0]/.test(name);

/** Where job files (output, logs) are kept: a folder (DiskJobFiles) or the database (DatabaseJobFiles). */
export interface JobFileStore {
  /** Writes a chunk an agent shipped at its offset; a chunk sent twice changes nothing. */
  write(jobId: number, name: string, offset: number, data: Buffer): Promise<void>;
  /** Writes a whole file written by the server itself (an import's log), replacing any earlier version. */
  replace(jobId: number, name: string, data: Buffer): Promise<void>;
  /** Current size in bytes; 0 when the job wrote nothing. */
  size(jobId: number, name: string): Promise<number>;
  /** Streams bytes `start`..`end` inclusive, never the whole file at once. */
  read(jobId: number, name: string, start: number, end: number): Readable;
  remove(jobIds: readonly number[]): Promise<void>;
}

/**
 * Job files on the server's disk: `<data>/jobfiles/<jobId>/<name>`, or `<folder>/<jobId>/<name>` in a folder given
 * (`--job-files`: one every server node mounts, docs/architecture.md §16). Chunks are written at the offset the agent
 * gives, so a chunk sent twice (after a reconnect) changes nothing; content is streamed, never read whole.
 */
export class DiskJobFiles implements JobFileStore {
  /** The folder holding a folder per job. */
  readonly root: string;

  constructor(dataDir: string, folder?: string) {
    this.root = folder ?? join(dataDir, 'jobfiles');
  }

  path(jobId: number, name: string): string {
    if (!isSafeFileName(name)) throw new Error(`unsafe job file name ${JSON.stringify(name)}`);
    return join(this.root, String(jobId), name);
  }

  async write(jobId: number, name: string, offset: number, data: Buffer): Promise<void> {
    const file = this.path(jobId, name);
    await mkdir(join(this.root, String(jobId)), { recursive: true });
    // No O_TRUNC (earlier chunks stay) and no O_APPEND (which would ignore the position).
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT, 0o640);
    try {
      await handle.write(data, 0, data.length, offset);
    } finally {
      await handle.close();
    }
  }

  /** Writes a whole file written by the server itself (an import's log), replacing any earlier version at once. */
  async replace(jobId: number, name: string, data: Buffer): Promise<void> {
    const file = this.path(jobId, name);
    await mkdir(join(this.root, String(jobId)), { recursive: true });
    await writeFile(`${file}.tmp`, data, { mode: 0o640 });
    await rename(`${file}.tmp`, file);
  }

  /** Current size in bytes; 0 when the job wrote nothing (no file is made for empty output). */
  async size(jobId: number, name: string): Promise<number> {
    try {
      return (await stat(this.path(jobId, name))).size;
    } catch {
      return 0;
    }
  }

  /** Streams bytes `start`..`end` inclusive. */
  read(jobId: number, name: string, start: number, end: number): Readable {
    return createReadStream(this.path(jobId, name), { start, end });
  }

  async remove(jobIds: readonly number[]): Promise<void> {
    for (const id of jobIds) await rm(join(this.root, String(id)), { recursive: true, force: true });
  }
}

/** Chunks read per query when streaming a file from the database. */
const CHUNKS_PER_READ = 16;

/**
 * Job files in the database (`--job-files database`, docs/architecture.md §16): every server node reads what any of
 * them received, and the purge removes them with the job. Read a few chunks at a time.
 */
export class DatabaseJobFiles implements JobFileStore {
  private readonly chunks: JobFileChunkStore;

  constructor(chunks: JobFileChunkStore) {
    this.chunks = chunks;
  }

  write(jobId: number, name: string, offset: number, data: Buffer): Promise<void> {
    if (!isSafeFileName(name)) return Promise.reject(new Error(`unsafe job file name ${JSON.stringify(name)}`));
    return this.chunks.put(jobId, name, { offset, data });
  }

  replace(jobId: number, name: string, data: Buffer): Promise<void> {
    return this.chunks.replace(jobId, name, data);
  }

  size(jobId: number, name: string): Promise<number> {
    return this.chunks.size(jobId, name);
  }

  read(jobId: number, name: string, start: number, end: number): Readable {
    const chunks = this.chunks;
    return Readable.from(
      (async function* () {
        // Chunks may overlap (shipped again with other boundaries) with the same bytes: give each byte once.
        let at = start;
        while (at <= end) {
          const page = await chunks.chunks(jobId, name, at, CHUNKS_PER_READ);
          let moved = false;
          for (const c of page) {
            if (c.offset > at) return; // a hole: the file ends here for now
            const from = at - c.offset;
            const until = Math.min(c.data.length, end + 1 - c.offset);
            if (until <= from) continue;
            yield c.data.subarray(from, until);
            at = c.offset + until;
            moved = true;
            if (at > end) return;
          }
          if (!moved) return;
        }
      })(),
      { objectMode: false },
    );
  }

  remove(jobIds: readonly number[]): Promise<void> {
    return this.chunks.remove(jobIds);
  }
}
