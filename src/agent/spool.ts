import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { FinishedMessage } from './protocol.ts';

/**
 * What the agent keeps on disk about one attempt, in `<data>/spool/<jobId>.<attempt>.json`. The entry is written
 * before the process is spawned (so an attempt missing from the spool was never started) and rewritten with the
 * final report when the process ends; it is deleted once the server acknowledges that report.
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

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'spool');
    mkdirSync(this.dir, { recursive: true });
  }

  private path(jobId: number, attempt: number): string {
    return join(this.dir, `${attemptKey(jobId, attempt)}.json`);
  }

  /**
   * Writes the entry (temporary file, then rename) before returning: nothing else may happen first. `durable`
   * also syncs it to disk first (~0.5 ms), for what must survive a machine crash: that an attempt was started,
   * and its final report; not for details such as its pid.
   */
  write(entry: SpoolEntry, durable = true): void {
    const target = this.path(entry.jobId, entry.attempt);
    const temp = `${target}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(entry));
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
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
