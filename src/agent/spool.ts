import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { FinishedMessage } from './protocol.ts';

/**
 * What the agent keeps on disk about one attempt, in `<data>/spool/<jobId>.<attempt>.json`. The entry is written
 * before the process is spawned (so an attempt missing from the spool was never started) and rewritten with the
 * final report when the process ends; it is deleted once the server acknowledges that report.
 *
 * It keeps nothing of the `run` message but its ids: the run's `env` may hold a credential's password, which must
 * never reach the disk in clear (the report's Out values are masked before they are spooled, reports.ts).
 */
export interface SpoolEntry {
  jobId: number;
  attempt: number;
  state: 'running' | 'finished';
  startTime?: number;
  pid?: number;
  /** The final report, kept until the server answers `ack`. */
  finished?: FinishedMessage;
}

/** An entry read back at start, or the key of a file that could not be read (reported as lost). */
export type LoadedEntry =
  | { ok: true; entry: SpoolEntry }
  | { ok: false; jobId: number; attempt: number; error: string };

const ENTRY_NAME = /^(\d{1,15})\.(\d{1,9})\.json$/;

export const attemptKey = (jobId: number, attempt: number): string => `${jobId}.${attempt}`;

export class Spool {
  readonly dir: string;
  /** Entries written `durable` whose sync to disk has not started yet. */
  private readonly unsynced = new Set<string>();
  private syncing: Promise<void> | null = null;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'spool');
    mkdirSync(this.dir, { recursive: true });
  }

  private path(jobId: number, attempt: number): string {
    return join(this.dir, `${attemptKey(jobId, attempt)}.json`);
  }

  /**
   * Writes the entry (temporary file, then rename) before returning: nothing else may happen first, and from then
   * on an agent that crashes and restarts reads it back. `durable` entries, for what must also survive a machine
   * crash (that an attempt was started, and its final report; not details such as its pid), are then synced to
   * disk in the background, with the folder, a few milliseconds later: an fsync here blocked the agent for 1–7 ms
   * twice per job, which capped the agent at a few hundred jobs per second, whatever the number of slots.
   */
  write(entry: SpoolEntry, durable = true): void {
    const target = this.path(entry.jobId, entry.attempt);
    const temp = `${target}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(entry));
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
    if (durable) {
      this.unsynced.add(target);
      this.startSync();
    }
  }

  /** Resolves once every durable entry written so far has been synced to disk (or removed meanwhile). */
  async flushed(): Promise<void> {
    while (this.syncing !== null) await this.syncing;
  }

  /** One sync pass at a time: every entry written since the last pass (in parallel), then the folder (the renames). */
  private startSync(): void {
    if (this.syncing !== null) return;
    this.syncing = (async () => {
      while (this.unsynced.size > 0) {
        const paths = [...this.unsynced];
        this.unsynced.clear();
        await Promise.all(paths.map((p) => syncToDisk(p)));
        await syncToDisk(this.dir);
      }
    })().finally(() => {
      this.syncing = null;
      if (this.unsynced.size > 0) this.startSync();
    });
  }

  remove(jobId: number, attempt: number): void {
    rmSync(this.path(jobId, attempt), { force: true });
  }

  /** Every entry, oldest job first. Leftover temporary files (a crash during a write) are deleted. */
  load(): LoadedEntry[] {
    const loaded: LoadedEntry[] = [];
    for (const name of readdirSync(this.dir)) {
      if (name.endsWith('.json.tmp')) {
        unlinkSync(join(this.dir, name));
        continue;
      }
      const m = ENTRY_NAME.exec(name);
      if (!m) continue;
      const jobId = Number(m[1]);
      const attempt = Number(m[2]);
      try {
        const entry = JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as SpoolEntry;
        if (entry.jobId !== jobId || entry.attempt !== attempt) throw new Error('its content names another attempt');
        if (entry.state !== 'running' && entry.state !== 'finished') throw new Error('unknown state');
        if (entry.state === 'finished' && !entry.finished) throw new Error('finished without a report');
        loaded.push({ ok: true, entry });
      } catch (err) {
        loaded.push({ ok: false, jobId, attempt, error: err instanceof Error ? err.message : String(err) });
      }
    }
    const id = (l: LoadedEntry) => (l.ok ? [l.entry.jobId, l.entry.attempt] : [l.jobId, l.attempt]) as [number, number];
    return loaded.sort((a, b) => {
      const [ja, aa] = id(a);
      const [jb, ab] = id(b);
      return ja - jb || aa - ab;
    });
  }
}

/** fsync of a file or folder; nothing when it is gone (an entry removed once acknowledged needs no sync). */
async function syncToDisk(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch {
    return;
  }
  try {
    await handle.sync();
  } catch {
    // A failed sync leaves the entry as durable as before: written, in the page cache.
  } finally {
    await handle.close().catch(() => {});
  }
}
