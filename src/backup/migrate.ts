import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openStore } from '../store/open.ts';
import { copyJobFiles } from './migrate-job-files.ts';
import { ident, PgTarget } from './pg-target.ts';
import { runningServer } from './server-pid.ts';
import { tablesToCopy } from './table-plan.ts';

export interface MigrateOptions {
  /** The SQLite server's data folder. */
  from: string;
  /** A `postgres://` URL. */
  to: string;
  /** Where the job files go: `database`, a folder, or (undefined) left where they are. */
  jobFiles?: string;
  /** Where the source server kept its job files when not in `<from>/jobfiles`. */
  sourceJobFiles?: string;
  /** Rows per insert statement (smaller batches: a slower copy that a kill interrupts more often). */
  batchRows?: number;
  say: (line: string) => void;
}

export interface TableCount {
  table: string;
  source: number;
  destination: number;
}

const DEFAULT_BATCH_ROWS = 500;

/**
 * Copies everything a SQLite server holds into PostgreSQL (docs/architecture.md §17): every table the plan copies
 * (table-plan.ts), each in rowid order in batches whose rows already there are left out, so that a run killed
 * part-way is finished by the next; every id kept; then the sequences moved on, the job files where `jobFiles`
 * says, and the counts of both sides compared.
 */
export async function migrateToPostgres(o: MigrateOptions): Promise<TableCount[]> {
  const from = resolve(o.from);
  const pid = runningServer(from);
  if (pid !== undefined) throw new Error(`a server (pid ${pid}) is using ${from}; stop it before migrating`);
  const file = join(from, 'millrace.sqlite');
  if (!existsSync(file)) throw new Error(`there is no Millrace database in ${from}`);
  // Both schemas at this version's level, as a start would make them.
  await (await openStore({ dataDir: from })).close();
  await (await openStore({ dataDir: from, databaseUrl: o.to })).close();
  const source = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  const target = await PgTarget.connect(o.to);
  try {
    await refuseForeignTarget(source, target);
    const tables = tablesToCopy(
      source.prepare<[], string>("select name from sqlite_master where type = 'table' order by rowid").pluck().all(),
    );
    for (const table of tables) await copyTable(source, target, table, o);
    const counters = source.prepare<[], { name: string; value: number }>('select name, value from sequences').all();
    for (const c of counters) await target.setSequence(`${c.name}_seq`, c.value);
    // Chunks made from the source's folder of job files count on the source's side.
    const chunks = await copyJobFiles(source, target, { ...o, from });
    const counts: TableCount[] = [];
    for (const table of tables) {
      const n = source
        .prepare(`select count(*) from ${ident(table)}`)
        .pluck()
        .get() as number;
      const extra = table === 'job_file_chunks' ? chunks : 0;
      counts.push({ table, source: n + extra, destination: await target.count(table) });
    }
    return counts;
  } finally {
    source.close();
    await target.close();
  }
}

/**
 * A destination that holds data is only taken as a copy this command began: its `meta` names the same first start
 * as the source's. No server may have started on it (its built-in objects would take the ids of the source's).
 */
async function refuseForeignTarget(source: BetterSqlite3.Database, target: PgTarget): Promise<void> {
  if ((await target.count('cluster_nodes')) > 0)
    throw new Error('a Millrace server has run on the destination database: migrate into an empty database');
  if ((await target.count('objects')) === 0 && (await target.count('meta')) === 0) return;
  const mine = source.prepare("select value from meta where name = 'initialised'").pluck().get();
  if (mine === undefined || (await target.meta('initialised')) !== mine)
    throw new Error('the destination database holds another Millrace installation: migrate into an empty database');
}

async function copyTable(source: BetterSqlite3.Database, target: PgTarget, table: string, o: MigrateOptions) {
  const info = source.prepare<[], { name: string; type: string }>(`pragma table_info(${ident(table)})`).all();
  const columns = info.map((c) => c.name);
  const known = await target.columns(table);
  const missing = columns.filter((c) => !known.has(c));
  if (known.size === 0 || missing.length > 0)
    throw new Error(
      `the destination has no ${known.size === 0 ? `table ${table}` : `column ${missing.join(', ')} in ${table}`}`,
    );
  const binary = info.some((c) => /blob/i.test(c.type));
  // Bounded by PostgreSQL's 65,535 parameters, and small for tables of binary content (chunks of files).
  const limit = Math.max(1, Math.min(o.batchRows ?? DEFAULT_BATCH_ROWS, binary ? 16 : 60_000 / columns.length));
  // Each row is its rowid, then the table's columns.
  const page = source
    .prepare<[number, number], [number, ...unknown[]]>(
      `select rowid as "__rowid", ${columns.map(ident).join(', ')} from ${ident(table)} where rowid > ? order by rowid limit ?`,
    )
    .raw();
  let after = -1;
  let copied = 0;
  let inserted = 0;
  let saidAt = performance.now();
  for (;;) {
    const rows = page.all(after, limit);
    const last = rows[rows.length - 1];
    if (!last) break;
    after = last[0];
    inserted += await target.insert(
      table,
      columns,
      rows.map((r) => r.slice(1)),
    );
    copied += rows.length;
    // Progress at most once a second (and the table's last line below): a large table has thousands of batches.
    if (performance.now() - saidAt >= 1000) {
      o.say(`${table}: ${copied} rows read, ${inserted} written`);
      saidAt = performance.now();
    }
  }
  o.say(`${table}: ${copied} rows read, ${inserted} written (done)`);
  await target.followSerials(table, columns);
}
