/**
 * SQLite plans a statement whose LIMIT or OFFSET is a bound parameter with the value bound, so binding it expires the
 * statement and every run prepares it again (better-sqlite3 binds at every run). A dispatch pass's read of due
 * Scheduled jobs (`… order by … limit ?`) took 20.6 µs a run against 1.6 µs, finding no row either way, on SQLite
 * 3.54; a read that finds rows also has better-sqlite3 build its row function anew (a `Function` compiled) after each
 * such preparation. Written as an expression (`limit +?`), the parameter is read when the statement runs and the
 * statement keeps its plan. The statements' plans are checked as rewritten (test/integration/store/
 * job-statement-indexes.test.ts).
 */
const BOUND_LIMIT = /\b(limit|offset) \?/gi;

/** The SQL text SQLite prepares: each `limit ?` and `offset ?` as `limit +?` and `offset +?`. */
export const keptPlan = (sql: string): string => sql.replace(BOUND_LIMIT, '$1 +?');
