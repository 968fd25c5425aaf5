import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestServer } from './server.ts';

/**
 * What a server has stored, every row of every table as text by table, to check that refused requests changed
 * nothing. Left out: what changes without any request (the nodes' beats, leases and agent presence), the API
 * keys' last use, which every authenticated request records, refused or not, and the audit log's sign-ins (a
 * basic-auth password checked afresh is a sign-in, docs/architecture.md §18) with the head that follows them.
 */
export interface StateSnapshots {
  take(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

const VOLATILE = new Set([
  'cluster_nodes',
  'cluster_leases',
  'agent_presence',
  'api_keys',
  'kysely_migration_lock',
  'kysely_migration',
  'audit_head',
]);

/** Rows of a table that count: the audit log's sign-ins are recorded whatever the request does. */
const rowsOf = (name: string): string =>
  name === 'audit_entries' ? `"${name}" t WHERE action NOT IN ('signin', 'signin-failed')` : `"${name}" t`;

export async function stateSnapshots(t: TestServer): Promise<StateSnapshots> {
  if (t.config.databaseUrl) {
    const client = new pg.Client({ connectionString: t.config.databaseUrl });
    await client.connect();
    const tables = (
      await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
      )
    ).rows
      .map((r) => r.table_name)
      .filter((n) => !VOLATILE.has(n));
    return {
      async take() {
        const out = new Map<string, string>();
        for (const name of tables) {
          const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${rowsOf(name)} ORDER BY 1`);
          out.set(name, rows.rows.map((r) => r.row).join('\n'));
        }
        return out;
      },
      close: () => client.end(),
    };
  }
  const db = new Database(join(t.config.dataDir, 'millrace.sqlite'), { readonly: true, fileMustExist: true });
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[])
    .map((r) => r.name)
    .filter((n) => !VOLATILE.has(n));
  return {
    async take() {
      const rows = (n: string) =>
        (
          db
            .prepare(`SELECT * FROM ${rowsOf(n)}`)
            .raw()
            .all() as unknown[]
        ).map((r) => JSON.stringify(r));
      return new Map(tables.map((n) => [n, rows(n).sort().join('\n')]));
    },
    async close() {
      db.close();
    },
  };
}

/** The first row of `table` that differs between two snapshots, before and after, for messages. */
export function firstDifference(a: Map<string, string>, b: Map<string, string>, table: string): string {
  const before = (a.get(table) ?? '').split('\n');
  const after = (b.get(table) ?? '').split('\n');
  const gone = before.find((r) => !after.includes(r));
  const added = after.find((r) => !before.includes(r));
  return `${table}: ${gone?.slice(0, 400) ?? '(none)'} → ${added?.slice(0, 400) ?? '(none)'}`;
}

/** The tables whose rows differ between two snapshots. */
export const changedTables = (a: Map<string, string>, b: Map<string, string>): string[] =>
  [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
