import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './tables.ts';

// The store's own bookkeeping, apart from the data it keeps: named `meta` values and the probe for free space.
// KyselyStore passes the calls on.

export async function getMeta(db: Kysely<Database>, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('meta').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

export async function setMeta(db: Kysely<Database>, name: string, value: string): Promise<void> {
  await db
    .insertInto('meta')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute();
}

/** What the space probe writes: more than a few pages, less than a cost a readiness check would notice. */
const SPACE_PROBE_BYTES = 64 * 1024;

/** Writes a row of random text in a transaction that never commits: fails when the database has no room. */
export async function probeSpace(db: Kysely<Database>): Promise<void> {
  // Random text, which neither dialect can store in less room; the row never commits.
  const value = randomBytes(SPACE_PROBE_BYTES * 0.75).toString('base64');
  const rollback = new Error('space probe rolled back');
  try {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('meta').values({ name: 'space-probe', value }).execute();
      throw rollback;
    });
  } catch (err) {
    if (err !== rollback) throw err;
  }
}
