// The audit log in both dialects (docs/architecture.md §18): entries gathered by a transaction are written in one
// insert just before it commits, numbered and chained from the head row, which the append locks until the commit.
import type { Kysely } from 'kysely';
import { chainHash } from '../domain/audit-chain.ts';
import { chainContent } from './audit-links.ts';
import { type AuditRow, auditRow } from './audit-rows.ts';
import { appendEntriesPg } from './pg-audit-append.ts';
import type { AuditEntry, AuditFilter, AuditInput, AuditStore } from './audit-store.ts';
import type { Database } from './tables.ts';

function fromRow(r: AuditRow): AuditEntry {
  const objectType = r.object_type;
  return {
    id: Number(r.id),
    time: Number(r.time),
    actor: {
      user: r.actor,
      interface: r.interface as AuditEntry['actor']['interface'],
      address: r.address,
      apiKeyId: r.api_key_id,
    },
    action: r.action,
    object:
      objectType === null
        ? null
        : {
            type: objectType,
            key: r.object_key ?? '',
            uniqueId: r.object_unique_id === null ? null : Number(r.object_unique_id),
          },
    detail: r.detail,
    diff: r.diff === null ? null : JSON.parse(r.diff),
    restore: r.restore === null ? null : JSON.parse(r.restore),
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

/** Rows a single insert carries (15 columns each, well under SQLite's bound variables). */
const INSERT_ROWS = 500;

/** Writes entries after the head, in order, and moves the head: the caller's transaction holds its lock. */
export async function appendEntries(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  entries: readonly AuditInput[],
): Promise<void> {
  if (entries.length === 0) return;
  if (dialect === 'postgres') return appendEntriesPg(db, entries);
  // SQLite: the statements cost no round trip, and the write lock is the transaction's own.
  const readHead = () =>
    db.selectFrom('audit_head').select(['last_id', 'last_hash']).where('id', '=', 1).executeTakeFirst();
  let head = await readHead();
  if (!head) {
    await db
      .insertInto('audit_head')
      .values({ id: 1, last_id: 0, last_hash: '' })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    head = await readHead();
  }
  let id = Number(head?.last_id ?? 0);
  let prev = head?.last_hash ?? '';
  const rows: AuditRow[] = [];
  for (const e of entries) {
    id += 1;
    const hash = chainHash(prev, chainContent(id, e));
    rows.push(auditRow(id, e, prev, hash));
    prev = hash;
  }
  for (let i = 0; i < rows.length; i += INSERT_ROWS)
    await db
      .insertInto('audit_entries')
      .values(rows.slice(i, i + INSERT_ROWS))
      .execute();
  await db.updateTable('audit_head').set({ last_id: id, last_hash: prev }).where('id', '=', 1).execute();
}

export class KyselyAudit implements AuditStore {
  private readonly db: Kysely<Database>;
  /** In a transaction: the entries to write before it commits; outside one, undefined. */
  private readonly pending: AuditInput[] | undefined;
  private readonly alone: (entry: AuditInput) => Promise<void>;

  constructor(db: Kysely<Database>, pending: AuditInput[] | undefined, alone: (entry: AuditInput) => Promise<void>) {
    this.db = db;
    this.pending = pending;
    this.alone = alone;
  }

  async add(entry: AuditInput): Promise<void> {
    if (this.pending) this.pending.push(entry);
    else await this.alone(entry);
  }

  async list(f: AuditFilter): Promise<AuditEntry[]> {
    let q = this.db.selectFrom('audit_entries').selectAll();
    if (f.type !== undefined) q = q.where('object_type', '=', f.type);
    if (f.key !== undefined) q = q.where('object_key', '=', f.key);
    if (f.user !== undefined) q = q.where('actor', '=', f.user);
    if (f.action !== undefined) q = q.where('action', '=', f.action);
    if (f.since !== undefined) q = q.where('time', '>=', f.since);
    if (f.until !== undefined) q = q.where('time', '<=', f.until);
    if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
    const rows = await q.orderBy('id', 'desc').limit(f.limit).execute();
    return rows.map(fromRow);
  }

  async get(id: number): Promise<AuditEntry | undefined> {
    const row = await this.db.selectFrom('audit_entries').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async latestAbout(type: string, key: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('audit_entries')
      .select('id')
      .where('object_type', '=', type)
      .where('object_key', '=', key)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? Number(row.id) : undefined;
  }

  async ascending(afterId: number, limit: number, since?: number): Promise<AuditEntry[]> {
    let q = this.db.selectFrom('audit_entries').selectAll().where('id', '>', afterId);
    if (since !== undefined) q = q.where('time', '>=', since);
    const rows = await q.orderBy('id', 'asc').limit(limit).execute();
    return rows.map(fromRow);
  }

  async head(): Promise<{ id: number; hash: string } | undefined> {
    const row = await this.db
      .selectFrom('audit_head')
      .select(['last_id', 'last_hash'])
      .where('id', '=', 1)
      .executeTakeFirst();
    return row && Number(row.last_id) > 0 ? { id: Number(row.last_id), hash: row.last_hash } : undefined;
  }

  async purge(before: number, limit: number): Promise<number> {
    const ids = await this.db
      .selectFrom('audit_entries')
      .select('id')
      .where('time', '<', before)
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    const last = ids.at(-1);
    if (last === undefined) return 0;
    // The oldest entries, a contiguous run: verify then starts from the oldest kept one.
    const result = await this.db.deleteFrom('audit_entries').where('id', '<=', Number(last.id)).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
