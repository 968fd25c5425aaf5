import type { Kysely } from 'kysely';

/**
 * One agent process serves a process server at a time (docs/architecture.md §16): the presence row names the agent
 * instance that holds it, so that another instance is refused while the holder's node lives, and the same instance
 * may move to another node.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('agent_presence')
    .addColumn('instance', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
}
