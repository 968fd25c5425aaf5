import type { Kysely } from 'kysely';
import type { JobFileRecord, JobRecord } from '../domain/job.ts';
import type { JobStatus } from '../model/fields.ts';
import type { ActiveCount } from './job-store.ts';
import * as files from './kysely-job-files.ts';
import * as queries from './kysely-job-queries.ts';
import type { JobRow } from './kysely-job-rows.ts';
import type { Database } from './tables.ts';

/**
 * The JobStore's reads that only query and turn rows into records (a job's children, counts, the engine's timers
 * and housekeeping) and its job files. Apart from KyselyJobStore (kysely-jobs.ts), which keeps what a transaction
 * holds of jobs (status changes, causes, rows held back for round trips); it says how a read reaches the database
 * (`flushed`: after the deferred updates are sent) and how a row becomes a record (`load`: its status noted).
 */
export abstract class KyselyJobReads {
  protected readonly db: Kysely<Database>;
  protected readonly dialect: 'sqlite' | 'postgres';
  protected readonly onWrite: () => void;

  constructor(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', onWrite: () => void) {
    this.db = db;
    this.dialect = dialect;
    this.onWrite = onWrite;
  }

  protected abstract flushed(): Promise<Kysely<Database>>;
  protected abstract load: (row: JobRow) => JobRecord;

  async listChildren(parentJob: number): Promise<JobRecord[]> {
    return (await queries.children(await this.flushed(), parentJob)).map(this.load);
  }

  async countByStatusAndQueue(): Promise<{ status: JobStatus; queue: string; count: number }[]> {
    const rows = await queries.countByStatusAndQueue(await this.flushed());
    return rows.map((r) => ({ status: r.status, queue: r.queue, count: Number(r.n) }));
  }

  async countActive(statuses: readonly JobStatus[]): Promise<ActiveCount[]> {
    return (await queries.countActive(await this.flushed(), statuses)).map((r) => ({
      queue: r.queue,
      processServer: r.process_server,
      status: r.status,
      count: Number(r.n),
    }));
  }

  async dueScheduled(now: number, limit: number): Promise<JobRecord[]> {
    return (await queries.dueScheduled(await this.flushed(), now, limit)).map(this.load);
  }

  async nextScheduledStart(after?: number): Promise<number | undefined> {
    const t = await queries.nextScheduledStart(await this.flushed(), after);
    return t === null || t === undefined ? undefined : Number(t);
  }

  async dueMaxRun(now: number, limit: number): Promise<JobRecord[]> {
    return (await queries.dueMaxRun(await this.flushed(), now, limit)).map(this.load);
  }

  async nextMaxRunDue(after?: number): Promise<number | undefined> {
    const t = await queries.nextMaxRunDue(await this.flushed(), after);
    return t === null || t === undefined ? undefined : Number(t);
  }

  async anyReferring(column: 'definition' | 'queue' | 'processServer', key: string): Promise<number | undefined> {
    const row = await queries.anyReferring(await this.flushed(), column, key);
    return row ? Number(row.job_id) : undefined;
  }

  async finishedBeyond(definition: string, keep: number, limit: number): Promise<number[]> {
    return (await queries.finishedBeyond(await this.flushed(), definition, keep, limit)).map((r) => Number(r.job_id));
  }

  async finishedBefore(time: number, limit: number): Promise<number[]> {
    return (await queries.finishedBefore(await this.flushed(), this.dialect, time, limit)).map((r) => Number(r.job_id));
  }

  async insertFiles(jobFiles: readonly JobFileRecord[], options: { ifAbsent?: boolean } = {}): Promise<void> {
    if (jobFiles.length === 0) return;
    await files.insertFiles(this.db, jobFiles, options.ifAbsent === true);
    this.onWrite();
  }

  async updateFiles(jobFiles: readonly JobFileRecord[]): Promise<void> {
    await files.updateFileSizes(this.db, jobFiles);
    if (jobFiles.length > 0) this.onWrite();
  }

  listFiles(jobId: number): Promise<JobFileRecord[]> {
    return files.listFiles(this.db, this.dialect, jobId);
  }

  listFilesOfJobs(jobIds: readonly number[]): Promise<JobFileRecord[]> {
    return jobIds.length === 0 ? Promise.resolve([]) : files.listFilesOfJobs(this.db, jobIds);
  }

  getFile(uniqueId: number): Promise<JobFileRecord | undefined> {
    return files.getFile(this.db, uniqueId);
  }
}
