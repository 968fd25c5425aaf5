/**
 * Which tables `millrace migrate` copies (docs/architecture.md §17). Every table of the source database is copied
 * unless it is named here with the reason it is not, so a table a later migration adds is carried without a
 * change here; test/unit/backup/table-plan.test.ts fails for a table that is neither.
 */
export const NOT_COPIED: Readonly<Record<string, string>> = {
  kysely_migration: 'the destination runs its own migrations',
  kysely_migration_lock: 'the destination runs its own migrations',
  sequences: "SQLite's counters: they set the PostgreSQL sequences instead",
  cluster_nodes: 'the server nodes alive now: each running node writes its own',
  cluster_leases: 'held by running nodes only',
  agent_presence: 'where agents are connected now: written again when they connect',
  auth_failures: 'the failed sign-ins of the last minute',
};

/** Copied before every other table: the destination's `meta` tells a resumed copy from a foreign database. */
const FIRST = 'meta';

/**
 * The tables to copy, in the order given (the order the source created them, so a table comes after those it
 * refers to), `meta` first; SQLite's own tables are never listed.
 */
export function tablesToCopy(sourceTables: readonly string[]): string[] {
  const copied = sourceTables.filter((t) => !t.startsWith('sqlite_') && !(t in NOT_COPIED));
  return copied.includes(FIRST) ? [FIRST, ...copied.filter((t) => t !== FIRST)] : copied;
}
