import { CompiledQuery, type Kysely } from 'kysely';
import type { JobFileRecord } from '../domain/job.ts';
import { toFile } from './kysely-job-rows.ts';
import type { Database } from './tables.ts';

/** A job's files (their records; the content is elsewhere): one function per statement, naming its index. */

type Db = Kysely<Database>;

/** New file records, in one statement. */
export async function insertFiles(db: Db, files: readonly JobFileRecord[]): Promise<void> {
  await db
    .insertInto('job_files')
    .values(
      files.map((f) => ({
        unique_id: f.uniqueId,
        job_id: f.jobId,
        name: f.name,
        file_order: f.fileOrder,
        type: f.type,
        format: f.format,
        size: f.size,
      })),
    )
    .execute();
}

/** The sizes of files that grew, one by one by primary key. */
export async function updateFileSizes(db: Db, files: readonly JobFileRecord[]): Promise<void> {
  for (const f of files)
    await db.updateTable('job_files').set({ size: f.size }).where('unique_id', '=', f.uniqueId).execute();
}

/**
 * A job's files in their order: the unique (job_id, name) index, sorted. Read when a job starts running and when it
 * ends, so its text is built once per dialect (building it with the query builder cost more than running it on
 * SQLite, as for the job statements in kysely-job-statements.ts).
 */
const LIST_FILES = {
  sqlite: 'select * from "job_files" where "job_id" = ? order by "file_order", "name"',
  postgres: 'select * from "job_files" where "job_id" = $1 order by "file_order", "name"',
} as const;

export async function listFiles(db: Db, dialect: 'sqlite' | 'postgres', jobId: number): Promise<JobFileRecord[]> {
  const result = await db.executeQuery<Database['job_files']>(CompiledQuery.raw(LIST_FILES[dialect], [jobId]));
  return result.rows.map(toFile);
}

/** The files of several jobs, by job: the unique (job_id, name) index, sorted. */
export async function listFilesOfJobs(db: Db, jobIds: readonly number[]): Promise<JobFileRecord[]> {
  const rows = await db
    .selectFrom('job_files')
    .selectAll()
    .where('job_id', 'in', [...jobIds])
    .orderBy('job_id')
    .orderBy('file_order')
    .orderBy('name')
    .execute();
  return rows.map(toFile);
}

/** One file by its primary key. */
export async function getFile(db: Db, uniqueId: number): Promise<JobFileRecord | undefined> {
  const row = await db.selectFrom('job_files').selectAll().where('unique_id', '=', uniqueId).executeTakeFirst();
  return row ? toFile(row) : undefined;
}
