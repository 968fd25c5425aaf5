// The audit append on PostgreSQL in one statement (docs/architecture.md §18): the head is locked, the entries are
// chained from it and inserted, and the head is moved, all before the answer comes back. Written as three
// statements, the head's lock was held over three round trips before the commit, and every node's commits of
// audited changes queue on that one row.
import { type Kysely, sql } from 'kysely';
import { canonicalJson } from '../domain/audit-chain.ts';
import { chainContent } from './audit-links.ts';
import { pgArray } from './pg-array.ts';
import { PREPARED } from './pg-prepared.ts';
import type { AuditInput } from './audit-store.ts';
import type { Database } from './tables.ts';

/**
 * Entries a statement chains: its recursive part joins each step to the entries, so a statement's cost grows with
 * the square of its entries; more are written a statement per batch, each continuing from the head the last moved.
 */
const BATCH = 100;

/**
 * The canonical JSON an entry's hash covers (`chainContent`), cut where the digits of its id go, which only the
 * statement knows: canonicalJson sorts the keys, so the text is `{`, the keys before "id", `"id":<id>`, the keys
 * after it, `}`; each side is the canonical JSON of its keys without the outer brace on the id's side.
 */
function aroundId(e: AuditInput): [string, string] {
  const content = chainContent(0, e);
  const lower: Record<string, unknown> = {};
  const upper: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(content)) if (k !== 'id') (k < 'id' ? lower : upper)[k] = v;
  const low = canonicalJson(lower).slice(0, -1); // `{…` without its `}`
  const high = canonicalJson(upper).slice(1); // `…}` without its `{`
  return [`${low}${low === '{' ? '' : ','}"id":`, `${high === '}' ? '' : ','}${high}`];
}

const column = (entries: readonly AuditInput[], pick: (e: AuditInput) => string | number | null): string =>
  pgArray(entries.map(pick));
const json = (v: unknown): string | null => (v ? JSON.stringify(v) : null);

/**
 * Appends `entries` after the head, in order. Each hash is `chainHash` of domain/audit-chain.ts — sha256 in hex
 * over the previous hash, a newline and the canonical JSON — computed by PostgreSQL over the same text. Returns
 * false, writing nothing, when the head row does not exist yet.
 */
async function appendBatch(db: Kysely<Database>, entries: readonly AuditInput[]): Promise<boolean> {
  const parts = entries.map(aroundId);
  const r = await sql<{ moved: number }>`${sql.raw(PREPARED)}
    with recursive
      head as (select last_id, last_hash from audit_head where id = 1 for update),
      input as (
        select * from unnest(
          ${pgArray(parts.map((p) => p[0]))}::text[], ${pgArray(parts.map((p) => p[1]))}::text[],
          ${column(entries, (e) => e.time)}::bigint[], ${column(entries, (e) => e.actor.user)}::text[],
          ${column(entries, (e) => e.actor.apiKeyId)}::text[], ${column(entries, (e) => e.actor.address)}::text[],
          ${column(entries, (e) => e.actor.interface)}::text[], ${column(entries, (e) => e.action)}::text[],
          ${column(entries, (e) => e.object?.type ?? null)}::text[],
          ${column(entries, (e) => e.object?.key ?? null)}::text[],
          ${column(entries, (e) => e.object?.uniqueId ?? null)}::bigint[],
          ${column(entries, (e) => e.detail)}::text[], ${column(entries, (e) => json(e.diff))}::text[],
          ${column(entries, (e) => json(e.restore))}::text[]
        ) with ordinality as t(before, after, time, actor, api_key_id, address, interface, action, object_type,
          object_key, object_unique_id, detail, diff, restore, n)
      ),
      chain (n, id, prev_hash, hash) as (
        select 0::bigint, last_id, ''::text, last_hash from head
        union all
        select c.n + 1, c.id + 1, c.hash,
          encode(sha256(convert_to(c.hash || E'\\n' || i.before || (c.id + 1)::text || i.after, 'UTF8')), 'hex')
        from chain c join input i on i.n = c.n + 1
      ),
      written as (
        insert into audit_entries (id, time, actor, api_key_id, address, interface, action, object_type, object_key,
          object_unique_id, detail, diff, restore, prev_hash, hash)
        select c.id, i.time, i.actor, i.api_key_id, i.address, i.interface, i.action, i.object_type, i.object_key,
          i.object_unique_id, i.detail, i.diff, i.restore, c.prev_hash, c.hash
        from chain c join input i on i.n = c.n
      ),
      moved as (
        update audit_head set last_id = c.id, last_hash = c.hash
        from chain c where audit_head.id = 1 and c.n = ${entries.length}
        returning 1
      )
    select count(*)::int as moved from moved`.execute(db);
  return Number(r.rows[0]?.moved ?? 0) === 1;
}

/** Writes entries after the head on PostgreSQL, making the head row at the first append ever. */
export async function appendEntriesPg(db: Kysely<Database>, entries: readonly AuditInput[]): Promise<void> {
  for (let i = 0; i < entries.length; i += BATCH) {
    const batch = entries.slice(i, i + BATCH);
    if (await appendBatch(db, batch)) continue;
    await db
      .insertInto('audit_head')
      .values({ id: 1, last_id: 0, last_hash: '' })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    if (!(await appendBatch(db, batch))) throw new Error('the audit head row is missing');
  }
}
