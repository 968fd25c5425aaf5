import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './tables.ts';

/** The store's sequences: the jobs' ids, and the unique ids that objects, jobs and their files share. */
export type SequenceName = 'job_id' | 'unique_id';

/**
 * The next `count` values of a sequence, in order, in one statement: PostgreSQL's sequence `<name>_seq`, or on
 * SQLite the `sequences` row (its primary key) moved on by the count, which answers the last value taken.
 */
export async function takeFromSequence(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  name: SequenceName,
  count: number,
): Promise<number[]> {
  if (count < 1) return [];
  if (dialect === 'postgres') {
    const text = `select nextval('${name}_seq') as "id" from generate_series(1, $1)`;
    const read = await db.executeQuery<{ id: string | number }>(CompiledQuery.raw(text, [count]));
    return read.rows.map((row) => Number(row.id));
  }
  const text = `update "sequences" set "value" = "value" + ? where "name" = '${name}' returning "value"`;
  const row = (await db.executeQuery<{ value: number }>(CompiledQuery.raw(text, [count]))).rows[0];
  if (!row) throw new Error(`the ${name} sequence is missing`);
  const last = Number(row.value);
  return Array.from({ length: count }, (_, i) => last - count + 1 + i);
}
