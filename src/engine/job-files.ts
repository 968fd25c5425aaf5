import { constants, createReadStream, type ReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A job file name an agent may report: a plain name, never a path. Checked again here: agents are not trusted. */
export const isSafeFileName = (name: string): boolean =>
  name.length > 0 && Buffer.byteLength(name) <= 255 && !name.startsWith('.') && !/[/\\\0]/.test(name);

/**
 * Job files on the server's disk: `<data>/jobfiles/<jobId>/<name>`, or `<folder>/<jobId>/<name>` in a folder given
 * (`--job-files`: one every server node mounts, docs/architecture.md §16). Chunks are written at the offset the agent
 * gives, so a chunk sent twice (after a reconnect) changes nothing; content is streamed, never read whole.
 */
export class JobFileStore {
  private readonly root: string;

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
  read(jobId: number, name: string, start: number, end: number): ReadStream {
    return createReadStream(this.path(jobId, name), { start, end });
  }

  async remove(jobIds: readonly number[]): Promise<void> {
    for (const id of jobIds) await rm(join(this.root, String(id)), { recursive: true, force: true });
  }
}
