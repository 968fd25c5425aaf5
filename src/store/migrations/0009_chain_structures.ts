import { type Kysely, sql } from 'kysely';
import type { Dialect } from './dialect.ts';

/**
 * A chain job's steps and handlers move out of its row (benchmark B7): the chain's row is read and written at every
 * step, and carrying the whole structure (every step's calls, mappings and handlers) made each step cost in
 * proportion to the chain's length. The structure never changes after the submit, so it lives in a table of its
 * own, read once and cached (store/kysely-chain-structures.ts); the row keeps `chain.structure.depth`, which marks a chain job.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('chain_structures')
    .addColumn('job_id', 'bigint', (c) => c.primaryKey())
    .addColumn('structure', 'text', (c) => c.notNull())
    .execute();
  if (dialect === 'postgres') {
    const has = sql`data::jsonb #> '{chain,structure,steps}' is not null`;
    await sql`insert into chain_structures (job_id, structure)
        select job_id, jsonb_build_object('steps', data::jsonb #> '{chain,structure,steps}',
          'handlers', coalesce(data::jsonb #> '{chain,structure,handlers}', '[]'::jsonb))::text
        from jobs where ${has}`.execute(db);
    await sql`update jobs set data = ((data::jsonb #- '{chain,structure,steps}') #- '{chain,structure,handlers}')::text
        where ${has}`.execute(db);
  } else {
    const has = sql`json_extract(data, '$.chain.structure.steps') is not null`;
    await sql`insert into chain_structures (job_id, structure)
        select job_id, json_object('steps', json(json_extract(data, '$.chain.structure.steps')),
          'handlers', json(coalesce(json_extract(data, '$.chain.structure.handlers'), '[]')))
        from jobs where ${has}`.execute(db);
    await sql`update jobs set data = json_remove(data, '$.chain.structure.steps', '$.chain.structure.handlers')
        where ${has}`.execute(db);
  }
}
