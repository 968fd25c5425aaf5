import { CompiledQuery, type Kysely } from 'kysely';
import type { JobFileRecord } from '../domain/job.ts';
import { toFile } from './kysely-job-rows.ts';
import type { Database } from './tables.ts';

/** A job's files (their records; the content is elsewhere): one function per statement, naming its index. */

type Db = Kysely<Database>;

/** New file records, in one statement; `ifAbsent`: those whose job has a file of that name are left out. */
export async function insertFiles(db: Db, files: readonly JobFileRecord[], ifAbsent = false): Promise<void> {
  const insert = db.insertInto('job_files').values(
    files.map((f) => ({
      unique_id: f.uniqueId,
      job_id: f.jobId,
      name: f.name,
      file_order: f.fileOrder,
      type: f.type,
      format: f.format,
      size: f.size,
    })),
  );
  await (ifAbsent ? insert.onConflict((c) => c.columns(['job_id', 'name']).doNothing()) : insert).execute();
}

/** The sizes of files that grew, one by one by primary key. */
export async function updateFileSizes(db: Db, files: readonly JobFileRecord[]): Promise<void> {
  for (const f of files)
    await db.updateTable('job_files').set({ size: f.size }).where('unique_id', '=', f.uniqueId).execute();
}

/**
 * A job's files: the unique (job_id, name) index. Read when a job ends and when one is shown, so its text is built
 * once per dialect (building it with the query builder cost more than running it on SQLite, as for the job
 * statements in kysely-job-statements.ts). Sorted here, not by the statement: an ORDER BY made SQLite sort the few
 * rows in a temporary B-tree, which took five times as long as the read itself (13.7 against 2.6 µs a call, 3,000
 * jobs' files).
 */
const LIST_FILES = {
  sqlite: 'select * from "job_files" where "job_id" = ?',
  postgres: 'select * from "job_files" where "job_id" = $1',
} as const;

/** A job's files in their order: by file_order, then by name. */
const inFileOrder = (a: JobFileRecord, b: JobFileRecord): number =>
  a.fileOrder - b.fileOrder || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export async function listFiles(db: Db, dialect: 'sqlite' | 'postgres', jobId: number): Promise<JobFileRecord[]> {
  const result = await db.executeQuery<Database['job_files']>(CompiledQuery.raw(LIST_FILES[dialect], [jobId]));
  return result.rows.map(toFile).sort(inFileOrder);
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
