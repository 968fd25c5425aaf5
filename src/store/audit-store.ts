// The audit log's contract (docs/architecture.md §18): entries are added inside the change's transaction and
// written, hash-chained, just before it commits; read newest first, keyset-paged; checked and purged from the oldest.
import type { AuditDiff } from '../model/audit-diff.ts';

/** Where a change came in: an interface, the CLI on the server's machine, or the server itself. */
export type AuditInterface = 'json' | 'xml' | 'cli' | 'console' | 'system';

/** Who made a change and through what: the user (or `system`), the API key's id (never the key), the address. */
export interface AuditActor {
  user: string;
  interface: AuditInterface;
  address: string | null;
  apiKeyId: string | null;
}

/** The actor of the server's own changes (the purge's note) and of account changes with no person behind them. */
export const SYSTEM_ACTOR: AuditActor = { user: 'system', interface: 'system', address: null, apiKeyId: null };

/** The object an entry is about. */
export interface AuditObject {
  type: string;
  key: string;
  uniqueId: number | null;
}

/** What a writer gives: the change, its actor, and (for objects) the diff and the data a restore puts back. */
export interface AuditInput {
  time: number;
  actor: AuditActor;
  action: string;
  object: AuditObject | null;
  detail: string | null;
  diff: AuditDiff | null;
  /** Object data as stored before the change (secrets sealed), for restore; never shown. */
  restore: Record<string, unknown> | null;
}

export interface AuditEntry extends AuditInput {
  id: number;
  prevHash: string;
  hash: string;
}

export interface AuditFilter {
  type?: string;
  key?: string;
  user?: string;
  action?: string;
  since?: number;
  until?: number;
  /** Keyset pagination, newest first: entries with a smaller id only. */
  beforeId?: number;
  limit: number;
}

export interface AuditStore {
  /**
   * Adds an entry to the transaction's, written with the others just before it commits (last, so the head's lock
   * is taken after every other lock of the transaction). Outside a transaction it is written at once.
   */
  add(entry: AuditInput): Promise<void>;
  list(filter: AuditFilter): Promise<AuditEntry[]>;
  get(id: number): Promise<AuditEntry | undefined>;
  /** The newest entry about an object, or undefined. */
  latestAbout(type: string, key: string): Promise<number | undefined>;
  /** Entries with ids above `afterId`, oldest first (verify, export). */
  ascending(afterId: number, limit: number, since?: number): Promise<AuditEntry[]>;
  /** The last entry written (id and hash), as the head row keeps it; undefined before the first. */
  head(): Promise<{ id: number; hash: string } | undefined>;
  /** Deletes up to `limit` of the oldest entries older than `before`; answers how many went. */
  purge(before: number, limit: number): Promise<number>;
}
