// Named prepared statements on PostgreSQL for the statements the store marks (docs/architecture.md §2): a
// statement whose text begins with `PREPARED` is parsed and planned once per connection, then only bound and
// run. Kysely sends every statement unnamed, so PostgreSQL parses and plans each one again; the marked ones are
// those every job goes through with arrays of many rows (the grouped inserts and updates, the history rows, the
// audit append), whose planning is not small, and the reads that are cheaper to run than to plan (a job by its id,
// a dispatch pass's candidates, an object by its key). Only statements that answer no rows, or rows of columns
// they name, are marked: the plan of a `select *` kept across a schema change (a newer node adding a column) would
// fail; `everyColumn` (tables.ts) checks that a list names them all.
import type { PostgresPool } from 'kysely';
import { hasParameters, wrapClients } from './pg-pool-wrap.ts';

/** The mark at the start of a statement's text (a comment, so the text is still the statement). */
export const PREPARED = '/* prepared */ ';

/** `pool` with the marked statements sent as named prepared statements, one name per distinct text. */
export function preparing(pool: PostgresPool): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string => {
    let name = names.get(text);
    if (name === undefined) {
      name = `millrace_${names.size + 1}`;
      names.set(text, name);
    }
    return name;
  };
  return wrapClients(pool, (send) => ({
    query: (text, values) =>
      typeof text === 'string' && text.startsWith(PREPARED) && hasParameters(values)
        ? send({ name: nameOf(text), text, values })
        : send(text, values),
  }));
}
