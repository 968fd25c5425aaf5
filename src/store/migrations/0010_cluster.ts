import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.ts';

/**
 * Several server nodes on one database (docs/architecture.md §16): the nodes alive (a heartbeat row each), the
 * leases they elect the timer owner by (a fencing token that grows with every change of holder), which node
 * holds each agent's connection and when it last heard from it, and job files kept in the database in chunks.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('cluster_nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('cluster_leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('token', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('agent_presence')
    .addColumn('process_server', 'text', (c) => c.primaryKey())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .addColumn('ready', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('job_file_chunks')
    .addColumn('job_id', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('offset', 'bigint', (c) => c.notNull())
    .addColumn('end_at', 'bigint', (c) => c.notNull())
    .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_file_chunks_pk', ['job_id', 'name', 'offset'])
    .execute();
}
