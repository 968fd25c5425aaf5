/**
 * SQLite may plan a statement with the values bound to its parameters, and then marks it to be prepared again
 * whenever a parameter is bound (better-sqlite3 binds at every run), so every run plans it anew:
 * - a bound LIMIT or OFFSET: the read of due Scheduled jobs (`… order by … limit ?`) took 20.6 µs a run against
 *   1.6 µs, finding no row either way (SQLite 3.54);
 * - a parameter compared with a column of a table that has a partial index on `… is not null`: SQLite asks whether
 *   the WHERE implies the index's condition, and that check looks at the bound value. The jobs table has five such
 *   indexes; a dispatch pass's read of an empty lane (`"queue" = ? and "definition_type" = ?`) took 24.8 µs against
 *   3.0 µs, and of a lane of nine jobs 49 µs against 12 (bench/README.md, B2).
 * A read that finds rows also has better-sqlite3 build its row function anew (a `Function` compiled) after each
 * such preparation. Written as an expression (`+?`, which SQLite's unary plus leaves as it is: a no-op on any value),
 * a parameter is read when the statement runs and the statement keeps its plan.
 *
 * No plan of this store needs a bound value: a partial index chosen by a value (jobs_scheduled's status, the pending
 * events and alert work) is named by a literal in the query (kysely-job-queries.ts, kysely-events.ts,
 * kysely-alert-work.ts). LIKE, GLOB, MATCH and REGEXP keep their bare parameter: SQLite reads an index for a LIKE
 * prefix only when it sees the pattern. The statements' plans are checked as rewritten
 * (test/integration/store/job-statement-indexes.test.ts).
 */

/** A quoted string or identifier, or a comment (each left as it is), or a bare parameter. */
const TOKEN = /'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|--[^\n]*|\/\*[\s\S]*?\*\/|\?/g;
/** What may stand before a parameter that SQLite needs to see when it plans: a pattern's operator. */
const PATTERN_BEFORE = /\b(?:like|glob|match|regexp|escape)\s*$/i;

/** The SQL text SQLite prepares: each bare parameter `?` as `+?`, but a pattern's. */
export const keptPlan = (sql: string): string =>
  sql.replace(TOKEN, (token, offset: number) =>
    token === '?' && !PATTERN_BEFORE.test(sql.slice(Math.max(0, offset - 16), offset)) ? '+?' : token,
  );
