// The audit append on PostgreSQL in one statement (docs/architecture.md §18): the head is locked, the entries are
// chained from it and inserted, and the head is moved, all before the answer comes back. Written as three
// statements, the head's lock was held over three round trips before the commit, and every node's commits of
// audited changes queue on that one row.
import { type Kysely, sql } from 'kysely';
import { canonicalJson } from '../domain/audit-chain.ts';
import { chainContent } from './audit-links.ts';
import { pgArray } from './pg-array.ts';
import { auditRow, ENTRY_COLUMNS } from './audit-rows.ts';
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

/** The entries' columns (audit-rows.ts), an array parameter each: their lists in the statement, and their types. */
const COLUMN_LIST = sql.raw(ENTRY_COLUMNS.join(', '));
const INPUT_LIST = sql.raw(ENTRY_COLUMNS.map((c) => `i.${c}`).join(', '));
const pgType = (c: (typeof ENTRY_COLUMNS)[number]) => (c === 'time' || c === 'object_unique_id' ? 'bigint' : 'text');

/**
 * Appends `entries` after the head, in order. Each hash is `chainHash` of domain/audit-chain.ts — sha256 in hex
 * over the previous hash, a newline and the canonical JSON — computed by PostgreSQL over the same text. Returns
 * false, writing nothing, when the head row does not exist yet.
 */
async function appendBatch(db: Kysely<Database>, entries: readonly AuditInput[]): Promise<boolean> {
  const parts = entries.map(aroundId);
  const rows = entries.map((e) => auditRow(0, e, '', ''));
  const arrays = ENTRY_COLUMNS.map((c) => sql`${pgArray(rows.map((r) => r[c]))}::${sql.raw(pgType(c))}[]`);
  const r = await sql<{ moved: number }>`${sql.raw(PREPARED)}
    with recursive
      head as (select last_id, last_hash from audit_head where id = 1 for update),
      input as (
        select * from unnest(
          ${pgArray(parts.map((p) => p[0]))}::text[], ${pgArray(parts.map((p) => p[1]))}::text[],
          ${sql.join(arrays)}
        ) with ordinality as t(before, after, ${COLUMN_LIST}, n)
      ),
      chain (n, id, prev_hash, hash) as (
        select 0::bigint, last_id, ''::text, last_hash from head
        union all
        select c.n + 1, c.id + 1, c.hash,
          encode(sha256(convert_to(c.hash || E'\\n' || i.before || (c.id + 1)::text || i.after, 'UTF8')), 'hex')
        from chain c join input i on i.n = c.n + 1
      ),
      written as (
        insert into audit_entries (id, ${COLUMN_LIST}, prev_hash, hash)
        select c.id, ${INPUT_LIST}, c.prev_hash, c.hash
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
