import { closeSync, fdatasync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { replaceDurably } from './durable-replace.ts';
import type { FinishedMessage } from './protocol.ts';

/**
 * What the agent keeps on disk about its attempts, in one append-only journal, `<data>/spool/journal`: a JSON line
 * each time an attempt's entry is written, and one when it is removed. The entry is written before the process is
 * spawned (so an attempt missing from the spool was never started) and again with the final report when the process
 * ends; it is removed once the server acknowledges that report. The last line of an attempt is what it is.
 *
 * One journal rather than a file per attempt: creating and deleting files was the agent's largest cost per job on
 * the file systems measured (journal-less ext4 scans past recently deleted inodes at every creation; bench/README.md
 * B2), and a file per attempt was two creations and a deletion per job. The journal is rewritten with only the live
 * entries (temporary file, sync, rename) when it is loaded and whenever it has grown well beyond them.
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

/** An entry read back at start, or the key of one that could not be read (reported as lost). */
export type LoadedEntry =
  | { ok: true; entry: SpoolEntry }
  | { ok: false; jobId: number; attempt: number; error: string };

/** The files of agents before the journal: one per attempt. Read once, folded into the journal, deleted. */
const ENTRY_NAME = /^(\d{1,15})\.(\d{1,9})\.json$/;
/** The ids at the start of a line, as JSON.stringify writes them: what a line cut short still tells. */
const LINE_KEY = /^\{"jobId":(\d{1,15}),"attempt":(\d{1,9})[,}]/;
const JOURNAL = 'journal';
/** The journal is rewritten once it is this large and four times the size of its live entries. */
const COMPACT_BYTES = 1024 * 1024;

const syncFd = promisify(fdatasync);

export const attemptKey = (jobId: number, attempt: number): string => `${jobId}.${attempt}`;

export class Spool {
  readonly dir: string;
  private readonly path: string;
  private fd: number | null = null;
  /** The entries the journal holds now, by attempt key, with the length of their line: what a rewrite keeps. */
  private readonly live = new Map<string, { entry: LoadedEntry; bytes: number }>();
  private size = 0;
  private liveBytes = 0;
  /** A durable line was written since the last sync started. */
  private unsynced = false;
  private syncing: Promise<void> | null = null;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'spool');
    mkdirSync(this.dir, { recursive: true });
    this.path = join(this.dir, JOURNAL);
  }

  /**
   * Every entry, oldest job first, from the journal (and the files of an older agent); the journal is rewritten
   * with them, and from then on written to. Called once, before any write.
   */
  load(): LoadedEntry[] {
    const loaded = readSpool(this.dir);
    for (const l of loaded) this.live.set(key(l), { entry: l, bytes: Buffer.byteLength(lineOf(l)) });
    this.rewrite();
    for (const name of readdirSync(this.dir))
      if (ENTRY_NAME.test(name) || name.endsWith('.json.tmp')) unlinkSync(join(this.dir, name));
    return loaded;
  }

  /**
   * Appends the entry before returning: nothing else may happen first, and from then on an agent that crashes and
   * restarts reads it back. `durable` entries, for what must also survive a machine crash (that an attempt was
   * started, and its final report; not details such as its pid), are then synced to disk in the background a few
   * milliseconds later, grouped: an fsync here blocked the agent twice per job (bench/README.md).
   */
  write(entry: SpoolEntry, durable = true): void {
    this.append(JSON.stringify(entry), { ok: true, entry });
    if (durable) {
      this.unsynced = true;
      this.startSync();
    }
  }

  remove(jobId: number, attempt: number): void {
    this.append(JSON.stringify({ jobId, attempt, removed: true }), undefined, attemptKey(jobId, attempt));
  }

  /** Resolves once every durable entry written so far has been synced to disk. */
  async flushed(): Promise<void> {
    while (this.syncing !== null) await this.syncing;
  }

  private append(line: string, entry: LoadedEntry | undefined, k = entry ? key(entry) : ''): void {
    if (this.fd === null) throw new Error('the spool is not loaded');
    const bytes = Buffer.from(`${line}\n`);
    writeSync(this.fd, bytes);
    this.size += bytes.length;
    this.liveBytes -= this.live.get(k)?.bytes ?? 0;
    if (entry) {
      this.live.set(k, { entry, bytes: bytes.length });
      this.liveBytes += bytes.length;
    } else this.live.delete(k);
    if (this.size >= COMPACT_BYTES && this.size >= 4 * this.liveBytes) this.rewrite();
  }

  /** The journal anew with the live entries only: written and synced aside, then put in place by a rename. */
  private rewrite(): void {
    const text = [...this.live.values()].map((l) => lineOf(l.entry)).join('');
    replaceDurably(this.path, text);
    const old = this.fd;
    this.fd = openSync(this.path, 'a', 0o600);
    this.size = this.liveBytes = Buffer.byteLength(text);
    // A sync of the old journal may still be under way: its descriptor is closed after it.
    if (old !== null) void (this.syncing ?? Promise.resolve()).finally(() => closeSync(old));
  }

  /** One sync at a time, of every durable line written before it started. */
  private startSync(): void {
    if (this.syncing !== null) return;
    this.syncing = (async () => {
      while (this.unsynced && this.fd !== null) {
        this.unsynced = false;
        // A failed sync leaves the lines as durable as before: written, in the page cache.
        await syncFd(this.fd).catch(() => {});
      }
    })().finally(() => {
      this.syncing = null;
      if (this.unsynced) this.startSync();
    });
  }
}

/** The entries a spool folder holds, without changing anything (the agent's own start-up, tests). */
export function readSpool(dir: string): LoadedEntry[] {
  const entries = new Map<string, LoadedEntry>();
  for (const name of readdirSync(dir)) {
    const m = ENTRY_NAME.exec(name);
    if (!m) continue;
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch (err) {
      text = `\0${err instanceof Error ? err.message : String(err)}`;
    }
    const l = parseEntry(text, Number(m[1]), Number(m[2]));
    if (l) entries.set(key(l), l);
  }
  let journal = '';
  try {
    journal = readFileSync(join(dir, JOURNAL), 'utf8');
  } catch {
    // no journal yet
  }
  for (const line of journal.split('\n')) {
    if (line === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      // A line cut short (the agent or the machine stopped while it was written): its ids tell what was lost.
      const m = LINE_KEY.exec(line);
      if (m) entries.set(attemptKey(Number(m[1]), Number(m[2])), parseEntry(line, Number(m[1]), Number(m[2])));
      continue;
    }
    const r = record as Partial<SpoolEntry> & { removed?: true };
    if (typeof r.jobId !== 'number' || typeof r.attempt !== 'number') continue;
    if (r.removed === true) entries.delete(attemptKey(r.jobId, r.attempt));
    else entries.set(attemptKey(r.jobId, r.attempt), parseEntry(line, r.jobId, r.attempt));
  }
  return sorted([...entries.values()]);
}

function parseEntry(text: string, jobId: number, attempt: number): LoadedEntry {
  try {
    const entry = JSON.parse(text) as SpoolEntry;
    if (entry.jobId !== jobId || entry.attempt !== attempt) throw new Error('its content names another attempt');
    if (entry.state !== 'running' && entry.state !== 'finished') throw new Error('unknown state');
    if (entry.state === 'finished' && !entry.finished) throw new Error('finished without a report');
    return { ok: true, entry };
  } catch (err) {
    return { ok: false, jobId, attempt, error: err instanceof Error ? err.message : String(err) };
  }
}

const ids = (l: LoadedEntry): [number, number] => (l.ok ? [l.entry.jobId, l.entry.attempt] : [l.jobId, l.attempt]);
const key = (l: LoadedEntry): string => attemptKey(...ids(l));

/** An unreadable entry is kept as started and not finished: read back as lost again, until acknowledged. */
const lineOf = (l: LoadedEntry): string =>
  `${JSON.stringify(l.ok ? l.entry : { jobId: l.jobId, attempt: l.attempt, state: 'running' })}\n`;

function sorted(entries: LoadedEntry[]): LoadedEntry[] {
  return entries.sort((a, b) => {
    const [ja, aa] = ids(a);
    const [jb, ab] = ids(b);
    return ja - jb || aa - ab;
  });
}
