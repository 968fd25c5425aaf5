import { readdir, realpath, rename, stat } from 'node:fs/promises';
import { join, matchesGlob } from 'node:path';
import { type FileWatch, isInside, watchId } from '../domain/file-watch.ts';
import { type Log, reason } from './log.ts';
import type { RaiseMessage, WatchState } from './protocol.ts';
import type { RaiseSpool } from './raise-spool.ts';
import { identityId, type Sighting, StableFiles } from './stable-files.ts';

export interface FileWatcherDeps {
  /** The agent's `--watch-root` folders; none: no folder may be watched. */
  roots: readonly string[];
  spool: RaiseSpool;
  log: Log;
  /** Sends a message if the agent is connected and welcomed; false when it is not. */
  send(message: RaiseMessage | { type: 'watchStatus'; watches: WatchState[] }): boolean;
}

/** A status with only a new lastPoll is sent at most this often; any other change at once. */
const STATUS_EVERY_MS = 5000;

/** One watch: its timer, the files it is waiting on, the identities it raised, and what it last saw. */
class Watch {
  readonly spec: FileWatch;
  readonly stable = new StableFiles();
  /**
   * Identities this agent process raised (acknowledged or not), by file name in the folder, so a file left there
   * is not offered again while it is unchanged; forgotten once the name is gone from the folder.
   */
  readonly raised = new Map<string, string>();
  timer: NodeJS.Timeout | undefined;
  polling = false;
  state: WatchState;

  constructor(spec: FileWatch) {
    this.spec = spec;
    const { definition, directory, pattern } = spec;
    this.state = { definition, directory, pattern, lastPoll: null, filesSeen: 0, lastError: null };
  }
}

/**
 * The agent's file watches (docs/architecture.md §7b): it polls each folder the server named (readdir and stat,
 * so it works on network mounts), raises each stable matching file once (moved first when the watch says so), and
 * keeps each raise in its spool until the server acknowledges it.
 */
export class FileWatcher {
  private readonly deps: FileWatcherDeps;
  private watches = new Map<string, Watch>();
  private lastStatus = '';
  private lastStatusAt = 0;
  private stopped = false;
  /** When each unacknowledged raise was last sent. */
  private readonly sentAt = new Map<string, number>();
  /**
   * Raises spooled ahead of their file's move, while the look moves the files: `resend` leaves them, for a move may
   * fail, and a file that could not be moved is not raised. The look sends each once its move is done.
   */
  private readonly moving = new Set<string>();

  constructor(deps: FileWatcherDeps) {
    this.deps = deps;
  }

  /** The server's list replaces the current one; a watch kept unchanged keeps its state. */
  update(specs: readonly FileWatch[]): void {
    if (this.stopped) return;
    const next = new Map<string, Watch>();
    for (const spec of specs) {
      const id = watchId(spec);
      const old = this.watches.get(id);
      if (old && JSON.stringify(old.spec) === JSON.stringify(spec)) {
        next.set(id, old);
        this.watches.delete(id);
        continue;
      }
      const w = new Watch(spec);
      next.set(id, w);
    }
    for (const gone of this.watches.values()) clearTimeout(gone.timer);
    this.watches = next;
    for (const w of next.values()) if (w.timer === undefined && !w.polling) this.schedule(w, 0);
    this.report(true);
  }

  /**
   * The raises not yet acknowledged, again: all of them after a (re)connect, else those sent `olderThanMs` ago or
   * more (the server may have failed to store them; it refuses a duplicate and acknowledges it again).
   */
  resend(olderThanMs = 0): void {
    const now = Date.now();
    for (const r of this.deps.spool.pending()) {
      if (this.moving.has(r.id)) continue;
      const at = this.sentAt.get(r.id);
      if (olderThanMs > 0 && at !== undefined && now - at < olderThanMs) continue;
      if (!this.send(r)) return;
    }
  }

  /** The server committed the raise: it leaves the spool. */
  acknowledged(id: string): void {
    this.deps.spool.remove(id);
    this.sentAt.delete(id);
  }

  private send(r: RaiseMessage): boolean {
    if (!this.deps.send(r)) return false;
    this.sentAt.set(r.id, Date.now());
    return true;
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches.values()) clearTimeout(w.timer);
  }

  private schedule(w: Watch, ms: number): void {
    w.timer = setTimeout(() => {
      w.timer = undefined;
      void this.poll(w);
    }, ms);
    w.timer.unref();
  }

  private async poll(w: Watch): Promise<void> {
    if (this.stopped || this.watches.get(watchId(w.spec)) !== w) return;
    w.polling = true;
    try {
      w.state.lastError = (await this.look(w)) ?? null;
    } catch (err) {
      const why = reason(err);
      if (w.state.lastError !== why) this.deps.log(`file watch ${watchId(w.spec)}: ${why}`);
      w.state.lastError = why;
    } finally {
      w.polling = false;
      w.state.lastPoll = Date.now();
      this.report(false);
      if (!this.stopped && this.watches.get(watchId(w.spec)) === w) this.schedule(w, w.spec.pollSeconds * 1000);
    }
  }

  /**
   * One look at the folder: the stable files are moved (if asked), spooled together and sent. Answers why a file
   * could not be moved, if one could not (it stays, and is not raised, nor offered again while it is unchanged).
   */
  private async look(w: Watch): Promise<string | undefined> {
    const { directory, moveDirectory, pattern, stableSeconds, definition } = w.spec;
    await this.checkInsideRoots(directory);
    if (moveDirectory !== null) await this.checkInsideRoots(moveDirectory);
    const entries = await readdir(directory, { withFileTypes: true });
    const target = (name: string) => join(moveDirectory ?? directory, name);
    const seen: Sighting[] = [];
    for (const e of entries) {
      if (!e.isFile() || !matchesGlob(e.name, pattern)) continue;
      const s = await stat(join(directory, e.name), { bigint: true }).catch(() => undefined);
      if (!s?.isFile()) continue; // gone since the listing
      const sighting = { name: e.name, size: Number(s.size), mtime: Number(s.mtimeMs), inode: String(s.ino) };
      if (w.raised.get(e.name) === identityId(definition, target(e.name), sighting)) continue;
      seen.push(sighting);
    }
    const listed = new Set(entries.map((e) => e.name));
    for (const name of w.raised.keys()) if (!listed.has(name)) w.raised.delete(name);
    // Spooled (and synced) before any move: a crash after a move still raises the file when the agent is back; a
    // crash before it finds the file again, with the same identity, which the server raises once.
    const stable = w.stable.look(seen, Date.now(), stableSeconds * 1000).map((s) => {
      const path = target(s.name);
      const id = identityId(definition, path, s);
      w.raised.set(s.name, id);
      const raise: RaiseMessage = { type: 'raise', id, definition, path, size: s.size, mtime: s.mtime, inode: s.inode };
      return { name: s.name, raise, known: this.deps.spool.has(id) };
    });
    this.deps.spool.add(stable.filter((f) => !f.known).map((f) => f.raise));
    let problem: string | undefined;
    const raises: RaiseMessage[] = [];
    if (moveDirectory !== null) for (const f of stable) this.moving.add(f.raise.id);
    try {
      for (const f of stable) {
        if (moveDirectory !== null) {
          // A rename keeps size, mtime and inode: the identity was known before the move.
          const from = join(directory, f.name);
          const failed = await rename(from, f.raise.path).then(
            () => undefined,
            (err: unknown) => reason(err),
          );
          if (failed !== undefined) {
            problem = `could not move ${from} to ${moveDirectory}: ${failed}; it is not raised`;
            this.deps.log(`file watch ${watchId(w.spec)}: ${problem}`);
            // Told to the server in place of the raise (an operator message), as reliably and once.
            const { id: _, ...identity } = f.raise;
            const told: RaiseMessage = {
              ...identity,
              id: identityId(definition, from, f.raise),
              path: from,
              moveError: problem,
            };
            if (!f.known) this.deps.spool.remove(f.raise.id);
            if (!this.deps.spool.has(told.id)) this.deps.spool.add([told]);
            raises.push(told);
            continue;
          }
        }
        w.state.filesSeen += 1;
        raises.push(f.raise);
      }
    } finally {
      for (const f of stable) this.moving.delete(f.raise.id);
    }
    for (const r of raises) if (!this.send(r)) break;
    return problem;
  }

  /** Refuses a folder outside every --watch-root (symbolic links resolved), with the reason the status shows. */
  private async checkInsideRoots(folder: string): Promise<void> {
    const { roots } = this.deps;
    const real = await realpath(folder).catch(() => folder);
    for (const root of roots) {
      const r = await realpath(root).catch(() => root);
      if (isInside(real, r)) return;
    }
    throw new Error(
      roots.length === 0
        ? `${folder} is not inside a --watch-root folder: this agent was started without --watch-root, so it watches no folder`
        : `${folder} is not inside a --watch-root folder of this agent (${roots.join(', ')})`,
    );
  }

  /** Sends the watches' state when it changed (a new lastPoll alone at most every STATUS_EVERY_MS). */
  private report(force: boolean): void {
    const watches = [...this.watches.values()].map((w) => ({ ...w.state }));
    const key = JSON.stringify(watches.map((s) => ({ ...s, lastPoll: s.lastPoll === null })));
    const now = Date.now();
    if (!force && key === this.lastStatus && now - this.lastStatusAt < STATUS_EVERY_MS) return;
    if (this.deps.send({ type: 'watchStatus', watches })) {
      this.lastStatus = key;
      this.lastStatusAt = now;
    }
  }
}
