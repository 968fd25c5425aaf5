import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';

/**
 * Append-only migrations: never edit one that has been released; add the next number instead.
 * DDL is written once for both dialects; where they differ the migration asks which one it runs on.
 */

type Dialect = 'sqlite' | 'postgres';

const m0001 = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    if (dialect === 'postgres') {
      // A real sequence: nextval never blocks on another transaction's row lock.
      await sql`create sequence unique_id_seq start 1000`.execute(db);
    } else {
      await db.schema
        .createTable('sequences')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'bigint', (c) => c.notNull())
        .execute();
      await sql`insert into sequences (name, value) values ('unique_id', 999)`.execute(db);
    }

    await db.schema
      .createTable('objects')
      .addColumn('unique_id', 'bigint', (c) => c.primaryKey())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('partition', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('protection', 'text')
      .addColumn('creation_time', 'bigint', (c) => c.notNull())
      .addColumn('modification_time', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('objects_type_key', ['type', 'key'])
      .execute();
    await db.schema.createIndex('objects_type_partition').on('objects').columns(['type', 'partition', 'key']).execute();

    await db.schema
      .createTable('object_refs')
      .addColumn('from_id', 'bigint', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('to_id', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('object_refs_pk', ['from_id', 'path'])
      .execute();
    await db.schema.createIndex('object_refs_to').on('object_refs').columns(['to_id', 'path']).execute();

    await db.schema
      .createTable('users')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('password_hash', 'text')
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('creation_time', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('roles')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('grants', 'text', (c) => c.notNull())
      .addColumn('builtin', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('creation_time', 'bigint', (c) => c.notNull())
      .addColumn('expiry_time', 'bigint', (c) => c.notNull())
      .addColumn('last_used_time', 'bigint')
      .addColumn('revoked_time', 'bigint')
      .execute();
    await db.schema.createIndex('api_keys_user').on('api_keys').column('user_name').execute();

    await db.schema
      .createTable('meta')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
});

/** Jobs and their files: the history, with the columns the dispatcher filters and orders on. */
const m0002 = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    if (dialect === 'postgres') await sql`create sequence job_id_seq start 1`.execute(db);
    else await sql`insert into sequences (name, value) values ('job_id', 0)`.execute(db);

    await db.schema
      .createTable('jobs')
      .addColumn('job_id', 'bigint', (c) => c.primaryKey())
      .addColumn('unique_id', 'bigint', (c) => c.notNull().unique())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('partition', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('priority', 'integer', (c) => c.notNull())
      .addColumn('queue', 'text', (c) => c.notNull())
      .addColumn('process_server', 'text')
      .addColumn('requested_start', 'bigint', (c) => c.notNull())
      .addColumn('scheduled_start', 'bigint')
      .addColumn('run_start', 'bigint')
      .addColumn('run_end', 'bigint')
      .addColumn('return_code', 'integer')
      .addColumn('parent_job', 'bigint')
      .addColumn('job_group', 'bigint')
      .addColumn('top_start', 'bigint', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('starts', 'integer', (c) => c.notNull())
      .addColumn('submitted_by', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('creation_time', 'bigint', (c) => c.notNull())
      .addColumn('modification_time', 'bigint', (c) => c.notNull())
      .execute();
    // Dispatch order (docs/architecture.md §8) within a status; also serves "jobs in status S" and the active counts.
    await db.schema
      .createIndex('jobs_dispatch')
      .on('jobs')
      .columns(['status', 'queue', 'priority desc', 'top_start', 'requested_start', 'job_id'])
      .execute();
    await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'requested_start']).execute();
    await db.schema.createIndex('jobs_definition').on('jobs').columns(['definition', 'job_id']).execute();
    await db.schema.createIndex('jobs_process_server').on('jobs').columns(['process_server', 'status']).execute();
    await db.schema.createIndex('jobs_queue').on('jobs').columns(['queue']).execute();
    await db.schema.createIndex('jobs_end').on('jobs').columns(['run_end']).execute();
    await db.schema.createIndex('jobs_group').on('jobs').columns(['job_group']).execute();
    await db.schema.createIndex('jobs_parent').on('jobs').columns(['parent_job']).execute();

    await db.schema
      .createTable('job_files')
      .addColumn('unique_id', 'bigint', (c) => c.primaryKey())
      .addColumn('job_id', 'bigint', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('file_order', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('format', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('job_files_job_name', ['job_id', 'name'])
      .execute();
  },
});

/**
 * Job indexes sized for a long history (B1/B5 benchmarks). Every index a row is in costs a page write per insert
 * or status change, and the finished jobs are nearly all rows; so the indexes that only serve pending or running
 * jobs, or columns that are mostly NULL, keep just the rows they serve:
 * - `jobs_scheduled` holds Scheduled jobs only (dueScheduled, nextScheduledStart: their queries name the status as
 *   a literal, which is how SQLite recognises that a partial index applies; it leads with status like
 *   `jobs_dispatch`, so that SQLite, which has no statistics, sees it as the better match);
 * - `jobs_end`, `jobs_process_server`, `jobs_group`, `jobs_parent` leave out rows whose column is NULL (a new job
 *   has no run end, process server, group or parent; `col = ?` and `col < ?` imply NOT NULL for both planners);
 * - `jobs_queue` goes: "is any job in this queue" is answered by `jobs_dispatch` (status, queue, …) with the status
 *   list spelled out.
 * A submitted job is then in 5 b-trees (table, job_id, unique_id, jobs_dispatch, jobs_definition) instead of 11.
 */
const m0003: Migration = {
  async up(db: Kysely<unknown>) {
    for (const name of ['jobs_status', 'jobs_end', 'jobs_process_server', 'jobs_queue', 'jobs_group', 'jobs_parent'])
      await db.schema.dropIndex(name).execute();
    await db.schema
      .createIndex('jobs_scheduled')
      .on('jobs')
      .columns(['status', 'requested_start', 'job_id'])
      .where(sql<boolean>`status = 'Scheduled'`)
      .execute();
    await db.schema
      .createIndex('jobs_end')
      .on('jobs')
      .column('run_end')
      .where(sql<boolean>`run_end is not null`)
      .execute();
    await db.schema
      .createIndex('jobs_process_server')
      .on('jobs')
      .columns(['process_server', 'status'])
      .where(sql<boolean>`process_server is not null`)
      .execute();
    await db.schema
      .createIndex('jobs_group')
      .on('jobs')
      .column('job_group')
      .where(sql<boolean>`job_group is not null`)
      .execute();
    await db.schema
      .createIndex('jobs_parent')
      .on('jobs')
      .column('parent_job')
      .where(sql<boolean>`parent_job is not null`)
      .execute();
  },
};

/**
 * Events: the raises of event definitions. `events_raised` is unique, so a definition never has two Raised
 * events whatever the writers do; it and `events_pending` hold only the rows of their status (their queries name
 * it as a literal, see m0003), since nearly every event ends up Cleared. `events_definition` answers the next
 * RaiseSequence and deletes a definition's history.
 */
const m0004: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('events')
      .addColumn('unique_id', 'bigint', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull().unique())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('partition', 'text', (c) => c.notNull())
      .addColumn('raise_sequence', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('raise_time', 'bigint', (c) => c.notNull())
      .addColumn('clear_time', 'bigint')
      .addColumn('data', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('events_raised')
      .on('events')
      .column('definition')
      .unique()
      .where(sql<boolean>`status = 'Raised'`)
      .execute();
    await db.schema
      .createIndex('events_pending')
      .on('events')
      .columns(['definition', 'raise_sequence'])
      .where(sql<boolean>`status = 'Pending'`)
      .execute();
    await db.schema.createIndex('events_definition').on('events').columns(['definition', 'raise_sequence']).execute();
  },
};

/** Alert work (checks, escalations, deliveries) due at a time; the pending ones are read by due time. */
const m0005: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('alert_work')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('due_at', 'bigint', (c) => c.notNull())
      .addColumn('alert_id', 'bigint')
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('data', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('alert_work_pending')
      .on('alert_work')
      .column('due_at')
      .where(sql<boolean>`state = 'pending'`)
      .execute();
    await db.schema.createIndex('alert_work_alert').on('alert_work').column('alert_id').execute();
  },
};

/** Binary content: library files and CAR archives waiting for their import job. */
const m0006 = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('blobs')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('blobs_pk', ['kind', 'owner', 'name'])
      .execute();
  },
});

/**
 * Job history: every status change with its time and cause, written in the transaction of the change and deleted
 * with the job. Read by job id in order; the one index is (job_id, id).
 */
const m0007 = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('job_history')
      // SQLite: an INTEGER PRIMARY KEY is the rowid, assigned on insert.
      .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
      .addColumn('job_id', 'bigint', (c) => c.notNull())
      .addColumn('time', 'bigint', (c) => c.notNull())
      .addColumn('from_status', 'text')
      .addColumn('to_status', 'text', (c) => c.notNull())
      .addColumn('user_name', 'text')
      .addColumn('cause', 'text', (c) => c.notNull())
      .addColumn('detail', 'text')
      .execute();
    await db.schema.createIndex('job_history_job').on('job_history').columns(['job_id', 'id']).execute();
  },
});

/**
 * Indexes for the lists of the console (GET /Job, GET /OperatorMessage …): each filter of a job list has an index
 * that ends in job_id, so a page is read newest first from where the cursor points, as fast deep in the history
 * as at its top (keyset pagination; benchmark B9). The costs are weighed as in m0003:
 * - `jobs_list_status` (status, job_id) is written at every status change, like `jobs_dispatch`: the one index
 *   that "the newest Error jobs" needs;
 * - `jobs_list_partition` and `jobs_list_queue` never change after the insert;
 * - `jobs_list_process_server` leaves out jobs that never ran (NULL);
 * - `jobs_group` and `jobs_parent` gain job_id in place (same rows, same writes; their old queries still match).
 * `objects_recent` serves the inboxes (messages and alerts newest first, by type).
 */
const m0008: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('jobs_list_status').on('jobs').columns(['status', 'job_id']).execute();
    await db.schema.createIndex('jobs_list_partition').on('jobs').columns(['partition', 'job_id']).execute();
    await db.schema.createIndex('jobs_list_queue').on('jobs').columns(['queue', 'job_id']).execute();
    await db.schema
      .createIndex('jobs_list_process_server')
      .on('jobs')
      .columns(['process_server', 'job_id'])
      .where(sql<boolean>`process_server is not null`)
      .execute();
    for (const [name, column] of [
      ['jobs_group', 'job_group'],
      ['jobs_parent', 'parent_job'],
    ] as const) {
      await db.schema.dropIndex(name).execute();
      await db.schema
        .createIndex(name)
        .on('jobs')
        .columns([column, 'job_id'])
        .where(sql<boolean>`${sql.ref(column)} is not null`)
        .execute();
    }
    await db.schema.createIndex('objects_recent').on('objects').columns(['type', 'unique_id']).execute();
  },
};

/**
 * A chain job's steps and handlers move out of its row (issue 17, B7): the chain's row is read and written at every
 * step, and carrying the whole structure (every step's calls, mappings and handlers) made each step cost in
 * proportion to the chain's length. The structure never changes after the submit, so it lives in a table of its
 * own, read once and cached (store/kysely-jobs.ts); the row keeps `chain.structure.depth`, which marks a chain job.
 */
const m0009 = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
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
  },
});

/**
 * Several server nodes on one database (docs/architecture.md §16): the nodes alive (a heartbeat row each), the
 * leases they elect the timer owner by (a fencing token that grows with every change of holder), which node
 * holds each agent's connection and when it last heard from it, and job files kept in the database in chunks.
 */
const m0010 = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
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
  },
});

/**
 * The dispatcher reads queued jobs by queue and definition type (issue 17, B2): a pass reads only the jobs that
 * servers with a free slot could run, at most as many as there are slots, where it read up to 500 whole queued rows
 * of every open queue to start a few. The type is `data.spec.type`, fixed at the submit; the dispatch index gains it
 * after the queue.
 */
const m0011 = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('jobs')
      .addColumn('definition_type', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    const type = dialect === 'postgres' ? sql`data::jsonb #>> '{spec,type}'` : sql`json_extract(data, '$.spec.type')`;
    await sql`update jobs set definition_type = coalesce(${type}, '')`.execute(db);
    await db.schema.dropIndex('jobs_dispatch').execute();
    await db.schema
      .createIndex('jobs_dispatch')
      .on('jobs')
      .columns(['status', 'queue', 'definition_type', 'priority desc', 'top_start', 'requested_start', 'job_id'])
      .execute();
  },
});

/**
 * Failed sign-ins counted where every node sees them (docs/architecture.md §10, §16): a row per address or user
 * name that failed lately, with its count and the start of its one-minute window. Rows are written only when a
 * sign-in fails and pruned once their window has ended, so the table holds about a minute of failures.
 */
const m0012: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('auth_failures')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('window_start', 'bigint', (c) => c.notNull())
      .execute();
  },
};

/**
 * One agent process serves a process server at a time (docs/architecture.md §16): the presence row names the agent
 * instance that holds it, so that another instance is refused while the holder's node lives, and the same instance
 * may move to another node.
 */
const m0013: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('agent_presence')
      .addColumn('instance', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
};

export const migrationProvider = (dialect: Dialect): MigrationProvider => ({
  async getMigrations() {
    return {
      '0001_objects_and_security': m0001(dialect),
      '0002_jobs': m0002(dialect),
      '0003_job_indexes': m0003,
      '0004_events': m0004,
      '0005_alert_work': m0005,
      '0006_blobs': m0006(dialect),
      '0007_job_history': m0007(dialect),
      '0008_job_list_indexes': m0008,
      '0009_chain_structures': m0009(dialect),
      '0010_cluster': m0010(dialect),
      '0011_job_definition_type': m0011(dialect),
      '0012_auth_failures': m0012,
      '0013_agent_instance': m0013,
    };
  },
});
