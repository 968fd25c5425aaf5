import { BULK, COLUMNS, PG_TYPE, UPDATED, type UpdatedColumn } from './kysely-job-rows.ts';
import { PREPARED } from './pg-prepared.ts';
import { columnList } from './tables.ts';

/**
 * The statements every job goes through (submit, dispatch, completion, GET), as SQL text built once per dialect,
 * one function each, naming the index it reads. Building and compiling them with Kysely's query builder each time
 * cost more than running them on SQLite (benchmark B1, bench/README.md), and as text the SQLite statement cache
 * keeps one prepared statement per query. The indexes are made by the migrations (src/store/migrations/);
 * test/integration/store/job-statement-indexes.test.ts checks that the reads use them.
 */

/** The placeholder of the i-th parameter (from 1) in the dialect's SQL text. */
type Placeholder = (i: number) => string;

/** The columns of a history row, in the order of the history statement's parameters. */
export const HISTORY = ['job_id', 'time', 'from_status', 'to_status', 'user_name', 'cause', 'detail'] as const;

/** A new job: every column, in `COLUMNS` order. */
const insertJob = (p: Placeholder) =>
  `insert into "jobs" (${columnList(COLUMNS)}) values (${COLUMNS.map((_, i) => p(i + 1)).join(', ')})`;

/** The columns a new job's parameters give on PostgreSQL (`insertNew`): all but its ids (and its own JobGroup). */
export const newJobColumns = (ownGroup: boolean) =>
  COLUMNS.filter((c) => c !== 'job_id' && c !== 'unique_id' && !(ownGroup && c === 'job_group'));

/**
 * PostgreSQL: a new job whose ids the sequences give in the same statement, answered by it: one round trip where
 * the ids and the row were three. The CTE calls volatile functions, so it runs once however often it is read.
 * `ownGroup`: its JobGroup is its own id (a recurrence's first job).
 */
const insertNewJob = (ownGroup: boolean) => {
  const given = newJobColumns(ownGroup);
  const value = (c: (typeof COLUMNS)[number]) =>
    c === 'job_id' || (ownGroup && c === 'job_group')
      ? '(select "j" from "ids")'
      : c === 'unique_id'
        ? '(select "u" from "ids")'
        : `$${given.indexOf(c) + 1}`;
  return (
    `with "ids" as (select nextval('unique_id_seq') as "u", nextval('job_id_seq') as "j") ` +
    `insert into "jobs" (${columnList(COLUMNS)}) values (${COLUMNS.map(value).join(', ')}) ` +
    'returning "job_id", "unique_id"'
  );
};

/**
 * PostgreSQL: the new jobs of a group of submits in one statement, an array parameter per column of `COLUMNS` from
 * `$from`; their ids were taken ahead (`reserveIds`).
 */
const insertJobsBulk = (from = 1) =>
  `insert into "jobs" (${columnList(COLUMNS)}) ` +
  `select * from unnest(${COLUMNS.map((c, i) => `$${from + i}::${PG_TYPE[c]}[]`).join(', ')})`;

/**
 * PostgreSQL: the ids of `count` new jobs in one round trip (a group of submits), taken from the sequences in the
 * order of the rows, and the objects version (migration 0020), read once, so the group's reads of its definitions
 * and queues may use the rows kept across transactions (object-row-cache.ts). The count is written into the text:
 * a statement without parameters can carry the transaction's BEGIN (pg-deferred-begin.ts), and a group's ids are
 * its transaction's first statement.
 */
export const reserveIds = (count: number): string => {
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`not a count of jobs: ${count}`);
  return (
    `select nextval('unique_id_seq') as "u", nextval('job_id_seq') as "j", ` +
    `(select "version" from "objects_version" where "id" = 1) as "v" from generate_series(1, ${count})`
  );
};

/** A job written back: the `UPDATED` columns, then its job_id (the primary key). */
const updateJob = (p: Placeholder) =>
  `update "jobs" set ${UPDATED.map((c, i) => `"${c}" = ${p(i + 1)}`).join(', ')} ` +
  `where "job_id" = ${p(UPDATED.length + 1)}`;

const sqliteUpdates = new Map<string, string>();

/**
 * SQLite: a job written back in the columns that changed (`changedColumns`), then its job_id; a text for each set
 * of columns, kept (a job's life changes a few sets: dispatched, started, ended).
 */
export function sqliteUpdateOf(columns: readonly UpdatedColumn[]): string {
  const key = columns.join(',');
  let text = sqliteUpdates.get(key);
  if (text === undefined) {
    if (sqliteUpdates.size >= 256) sqliteUpdates.clear(); // a bound, as the statement cache has (open.ts)
    text = `update "jobs" set ${columns.map((c) => `"${c}" = ?`).join(', ')} where "job_id" = ?`;
    sqliteUpdates.set(key, text);
  }
  return text;
}

/**
 * PostgreSQL: many jobs written back in one statement, one array parameter per column of `BULK` from `$from`,
 * joined on the primary key (each round trip to the server is paid inside the engine's serial loop; a dispatch
 * pass updates up to 500 jobs).
 */
const updateJobsBulk = (from = 1) =>
  `update "jobs" as j set ${UPDATED.map((c) => `"${c}" = v."${c}"`).join(', ')} ` +
  `from unnest(${BULK.map((c, i) => `$${from + i}::${PG_TYPE[c]}[]`).join(', ')}) as v(${columnList(BULK)}) ` +
  `where j."job_id" = v."job_id"`;

/**
 * The columns a read of whole jobs names. Not `select *`: PostgreSQL keeps the plan of a prepared statement across a
 * schema change only while its result's columns stay the same, and a newer node may add a column.
 */
const JOB = columnList(COLUMNS);

/** One job by its primary key. */
const getJob = (p: Placeholder, mark: string) => `${mark}select ${JOB} from "jobs" where "job_id" = ${p(1)}`;

/** Is any job queued: on SQLite, the first Queued entry of index jobs_list_status (status, job_id), no row read. */
const anyQueued = () => `select 1 as "one" from "jobs" where "status" = 'Queued' limit 1`;

/** The order of the dispatcher within a lane (docs/architecture.md §8), that of index jobs_dispatch after its lane. */
const DISPATCH_ORDER = ['"priority" desc', '"top_start"', '"requested_start"', '"job_id"'];

/**
 * SQLite: one lane of the dispatcher (a queue and a definition type) in dispatch order: index jobs_dispatch
 * (status, queue, definition_type, priority desc, top_start, requested_start, job_id) is read in its own order from
 * the lane's first entry, so the limit stops the read. A statement per lane: SQLite has no round trip to save.
 */
const laneCandidates = () =>
  `select ${JOB} from "jobs" where "status" = 'Queued' and "queue" = ? and "definition_type" = ? ` +
  `order by ${DISPATCH_ORDER.join(', ')} limit ? offset ?`;

/**
 * PostgreSQL: every lane of a dispatch pass in one statement, the lanes as arrays (queue, definition type, limit,
 * offset) and each read as SQLite reads one lane, from jobs_dispatch; `lane` numbers them from 1. A pass reads every
 * lane with room under the dispatch lock, and a lane per statement was a round trip each (one per queue and type).
 */
const lanesCandidates = () =>
  `${PREPARED}select l."lane", ${COLUMNS.map((c) => `j."${c}"`).join(', ')} ` +
  'from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) with ordinality ' +
  'as l("queue", "definition_type", "lim", "skip", "lane") ' +
  `cross join lateral (select ${JOB} from "jobs" where "status" = 'Queued' and "queue" = l."queue" ` +
  `and "definition_type" = l."definition_type" order by ${DISPATCH_ORDER.join(', ')} ` +
  'limit l."lim" offset l."skip") as j ' +
  `order by l."lane", ${DISPATCH_ORDER.map((o) => `j.${o}`).join(', ')}`;

/** The PostgreSQL type of each history column, in `HISTORY` order. */
const HISTORY_TYPES = ['bigint', 'bigint', 'text', 'text', 'text', 'text', 'text'] as const;

/**
 * History rows, appended (index job_history_job is written, not read). SQLite: up to SQLITE_HISTORY_CHUNK rows a
 * statement, a text for each count, each prepared once (a commit writes a few rows a job: a statement each cost more
 * than the rows). PostgreSQL: all rows of a commit in one statement, an array per column of `HISTORY` from `$from`,
 * sent with the rows held back (`heldWrite`).
 */
export const SQLITE_HISTORY_CHUNK = 16;
const sqliteHistoryTexts = Array.from(
  { length: SQLITE_HISTORY_CHUNK },
  (_, i) =>
    `insert into "job_history" (${columnList(HISTORY)}) values ` +
    Array.from({ length: i + 1 }, () => `(${HISTORY.map(() => '?').join(', ')})`).join(', '),
);
/** The SQLite statement that inserts `rows` history rows (1 to SQLITE_HISTORY_CHUNK). */
export const sqliteHistoryRows = (rows: number): string => {
  const text = sqliteHistoryTexts[rows - 1];
  if (text === undefined) throw new Error(`${rows} history rows in one statement: 1 to ${SQLITE_HISTORY_CHUNK}`);
  return text;
};
const historyBulk = (from: number) =>
  `insert into "job_history" (${columnList(HISTORY)}) select * from ` +
  `unnest(${HISTORY_TYPES.map((t, i) => `$${from + i}::${t}[]`).join(', ')})`;

/** What a flush of held rows sends on PostgreSQL (`heldWrite`): which parts, at least one. */
export interface HeldParts {
  insert: boolean;
  update: boolean;
  history: boolean;
}

const heldWrites = new Map<string, string>();

/**
 * PostgreSQL: the rows a transaction held back and the history rows that follow them, in one statement where they
 * were up to three (a round trip each, at every commit of submits, reports and dispatch passes): the new jobs
 * (`COLUMNS`' arrays first), the jobs written back (`BULK`'s next) and the history (`HISTORY`'s last), each part
 * present or not. Every part but the last is a data-modifying CTE. The new and the written-back jobs are distinct
 * rows (JobRowBuffer), no part reads a table another writes, and nothing checks history against jobs, so the
 * order in which PostgreSQL runs the parts does not matter.
 */
export function heldWrite(parts: HeldParts): string {
  const key = `${+parts.insert}${+parts.update}${+parts.history}`;
  let text = heldWrites.get(key);
  if (text === undefined) {
    const statements: string[] = [];
    let from = 1;
    if (parts.insert) {
      statements.push(insertJobsBulk(from));
      from += COLUMNS.length;
    }
    if (parts.update) {
      statements.push(updateJobsBulk(from));
      from += BULK.length;
    }
    if (parts.history) statements.push(historyBulk(from));
    const last = statements.pop();
    if (last === undefined) throw new Error('a held write of nothing');
    const ctes = statements.map((st, i) => `"w${i + 1}" as (${st})`);
    text = `${PREPARED}${ctes.length > 0 ? `with ${ctes.join(', ')} ` : ''}${last}`;
    heldWrites.set(key, text);
  }
  return text;
}

function jobStatements(dialect: 'sqlite' | 'postgres') {
  const p: Placeholder = (i) => (dialect === 'postgres' ? `$${i}` : '?');
  // The reads of every dispatch pass and job lookup: planning them each time cost PostgreSQL more than running them.
  const mark = dialect === 'postgres' ? PREPARED : '';
  return {
    insert: insertJob(p),
    update: updateJob(p),
    get: getJob(p, mark),
    anyQueued: anyQueued(),
    candidates: dialect === 'postgres' ? lanesCandidates() : laneCandidates(),
    // PostgreSQL's: a dispatch pass's or a report's writes sent at once (SQLite writes row by row, `update`).
    updateBulk: `${PREPARED}${updateJobsBulk()}`,
    insertNew: insertNewJob(false),
    insertNewOwnGroup: insertNewJob(true),
  };
}

export type JobStatements = ReturnType<typeof jobStatements>;

/** The job statements of each dialect, built once. */
export const JOB_STATEMENTS: Readonly<Record<'sqlite' | 'postgres', JobStatements>> = {
  sqlite: jobStatements('sqlite'),
  postgres: jobStatements('postgres'),
};
