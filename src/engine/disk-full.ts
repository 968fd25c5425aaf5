import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { LOW_SPACE_BYTES, lowOnSpace } from '../store/free-space.ts';
import { isDiskFull } from '../store/store.ts';
import type { JobFileStore } from './job-files.ts';
import { errorCode } from '../errors.ts';

/** What a full disk stops the server from writing. */
export type FullPlace = 'database' | 'job files';

/** How to tell that a place has room again: throws while it has none. */
export type SpaceProbe = () => Promise<void>;

/** Readiness probes at most this often while a disk is full (each writes and drops 64 KiB). */
const PROBE_EVERY_MS = 1000;
const PROBE_BYTES = 64 * 1024;

/**
 * Whether the server is short of disk space (docs/architecture.md §9). A write refused for want of space (SQLite's
 * SQLITE_FULL, PostgreSQL's 53100, a job file's ENOSPC) marks its place full; readiness then answers not ready with
 * the reason, and tries a write there itself (at most once a second) until one succeeds: then the place is clear
 * again and the server ready, with no restart. Requests are not refused up front: each write that fails answers
 * 503 naming the full disk, each that succeeds is stored.
 */
export class DiskFullWatch {
  private readonly full = new Map<FullPlace, { since: number; code: string }>();
  private readonly probes = new Map<FullPlace, SpaceProbe>();
  private readonly logger: Logger;
  private probedAt = Number.NEGATIVE_INFINITY;
  private probing: Promise<void> | undefined;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  /** How `place` is probed once it is full (set when the store and job files are made). */
  probeWith(place: FullPlace, probe: SpaceProbe): void {
    this.probes.set(place, probe);
  }

  /** A write to `place` was refused for want of space. */
  noted(place: FullPlace, err: unknown): void {
    if (this.full.has(place)) return;
    const code = String(errorCode(err) ?? 'no space');
    this.full.set(place, { since: Date.now(), code });
    this.logger.error(
      { err, place },
      `disk full: writes to the ${place} are refused (requests answer 503) until space is freed`,
    );
  }

  /** Why the server is not ready for want of space, or undefined; probes the full places first. */
  async reason(): Promise<string | undefined> {
    if (this.full.size === 0) return undefined;
    await this.probe();
    if (this.full.size === 0) return undefined;
    const parts = [...this.full].map(
      ([place, f]) => `the ${place} could not be written since ${new Date(f.since).toISOString()} (${f.code})`,
    );
    return `the disk is full: ${parts.join('; ')}; the server recovers by itself once space is freed`;
  }

  private probe(): Promise<void> {
    if (this.probing !== undefined) return this.probing;
    if (performance.now() - this.probedAt < PROBE_EVERY_MS) return Promise.resolve();
    this.probing = (async () => {
      for (const place of [...this.full.keys()]) {
        const probe = this.probes.get(place);
        if (!probe) continue;
        try {
          await probe();
          this.full.delete(place);
          this.logger.info({ place }, `disk space is back: the ${place} can be written again`);
        } catch {
          // still full (or not answering: readiness says so on its own)
        }
      }
    })().finally(() => {
      this.probedAt = performance.now();
      this.probing = undefined;
    });
    return this.probing;
  }
}

/**
 * A probe of the file system holding `dir`: at least LOW_SPACE_BYTES free, and a 64 KiB file can be written there
 * (and is removed again). A real write, since free blocks alone do not say a write will succeed (quotas, reserves).
 */
export function folderProbe(dir: string): SpaceProbe {
  return async () => {
    if (lowOnSpace(dir)) throw Object.assign(new Error(`less than ${LOW_SPACE_BYTES} bytes free`), { code: 'ENOSPC' });
    await mkdir(dir, { recursive: true });
    const file = join(dir, `.space-probe-${process.pid}`);
    try {
      await writeFile(file, Buffer.alloc(PROBE_BYTES, 0x2e));
    } finally {
      await rm(file, { force: true });
    }
  };
}

/** Job files in a folder whose refused writes (ENOSPC, EDQUOT) mark the job files' disk full. */
export function watchedJobFiles(files: JobFileStore, watch: DiskFullWatch): JobFileStore {
  const look = (err: unknown): never => {
    if (isDiskFull(err)) watch.noted('job files', err);
    throw err;
  };
  return {
    write: (jobId, name, offset, data) => files.write(jobId, name, offset, data).catch(look),
    replace: (jobId, name, data) => files.replace(jobId, name, data).catch(look),
    size: (jobId, name) => files.size(jobId, name),
    read: (jobId, name, start, end) => files.read(jobId, name, start, end),
    remove: (jobIds) => files.remove(jobIds),
  };
}
