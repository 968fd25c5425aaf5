import { closeSync, fdatasyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { replaceDurably } from './durable-replace.ts';
import type { RaiseMessage } from './protocol.ts';

/**
 * The file events this agent raised and the server has not acknowledged yet (docs/architecture.md §7b), in one
 * append-only journal beside the attempts' one, `<data>/spool/raises`: a line per raise, written and synced
 * before it is sent, and a line when the server answers `raised`. Read back at start and sent again, so a raise is
 * lost neither by a restart nor by a lost connection; the server refuses the second of one file identity.
 */
const JOURNAL = 'raises';
/** Rewritten with the live raises once it is this large and four times their size. */
const COMPACT_BYTES = 1024 * 1024;

export class RaiseSpool {
  private readonly path: string;
  private fd: number;
  private readonly live = new Map<string, RaiseMessage>();
  private size = 0;

  /** `spoolDir` exists already (the attempts' spool made it). */
  constructor(spoolDir: string) {
    this.path = join(spoolDir, JOURNAL);
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      // no journal yet
    }
    for (const line of text.split('\n')) {
      let r: (Partial<RaiseMessage> & { removed?: true }) | undefined;
      try {
        r = JSON.parse(line) as Partial<RaiseMessage> & { removed?: true };
      } catch {
        continue; // empty, or cut short by a crash while it was written (then it was never sent)
      }
      if (typeof r.id !== 'string') continue;
      if (r.removed === true) this.live.delete(r.id);
      else if (isRaise(r)) this.live.set(r.id, r);
    }
    this.fd = this.rewrite();
  }

  /** The raises not yet acknowledged, oldest first. */
  pending(): RaiseMessage[] {
    return [...this.live.values()];
  }

  has(id: string): boolean {
    return this.live.has(id);
  }

  /** Appends the raises and syncs them to disk before returning (once for the whole batch). */
  add(raises: readonly RaiseMessage[]): void {
    if (raises.length === 0) return;
    for (const r of raises) this.live.set(r.id, r);
    this.append(raises.map((r) => `${JSON.stringify(r)}\n`).join(''));
    fdatasyncSync(this.fd);
  }

  /** The server committed the raise (or refused it as a duplicate). */
  remove(id: string): boolean {
    if (!this.live.delete(id)) return false;
    this.append(`${JSON.stringify({ id, removed: true })}\n`);
    if (this.size >= COMPACT_BYTES && this.size >= 4 * this.liveBytes()) {
      const old = this.fd;
      this.fd = this.rewrite();
      closeSync(old);
    }
    return true;
  }

  close(): void {
    closeSync(this.fd);
  }

  private append(text: string): void {
    const bytes = Buffer.from(text);
    writeSync(this.fd, bytes);
    this.size += bytes.length;
  }

  private liveBytes(): number {
    let n = 0;
    for (const r of this.live.values()) n += JSON.stringify(r).length + 1;
    return n;
  }

  /** The journal anew with the live raises only (replaced durably); its append descriptor. */
  private rewrite(): number {
    const text = [...this.live.values()].map((r) => `${JSON.stringify(r)}\n`).join('');
    replaceDurably(this.path, text);
    this.size = Buffer.byteLength(text);
    return openSync(this.path, 'a', 0o600);
  }
}

function isRaise(r: Partial<RaiseMessage>): r is RaiseMessage {
  return (
    typeof r.definition === 'string' &&
    typeof r.path === 'string' &&
    typeof r.size === 'number' &&
    typeof r.mtime === 'number' &&
    typeof r.inode === 'string'
  );
}
