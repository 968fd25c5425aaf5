import type { JobRow } from './kysely-job-rows.ts';

/**
 * What a transaction's job store holds back to save round trips on PostgreSQL (docs/architecture.md §2, store):
 * rows read ahead for the reports of a batch, each handed out once and dropped when its job is written; and, while
 * updates are deferred, the rows written and not yet sent, which go out together (`send`) before anything else
 * reads jobs. A deferred write the database refused fails every later flush, so the transaction cannot commit.
 */
export class JobRowBuffer {
  private readonly ahead = new Map<number, JobRow>();
  private deferred: Map<number, JobRow> | undefined;
  private sending: Promise<void> | undefined;
  private refused: { error: unknown } | undefined;
  private readonly send: (rows: JobRow[]) => Promise<unknown>;

  constructor(send: (rows: JobRow[]) => Promise<unknown>) {
    this.send = send;
  }

  get deferring(): boolean {
    return this.deferred !== undefined;
  }

  /** Of these jobs, those not read ahead yet. */
  missing(jobIds: readonly number[]): number[] {
    return [...new Set(jobIds)].filter((id) => !this.ahead.has(id));
  }

  readAhead(rows: readonly JobRow[]): void {
    for (const row of rows) this.ahead.set(Number(row.job_id), row);
  }

  /** The job's row as this transaction last wrote it (deferred), or as read ahead (handed out once). */
  take(jobId: number): JobRow | undefined {
    const written = this.deferred?.get(jobId);
    if (written) return written;
    const read = this.ahead.get(jobId);
    this.ahead.delete(jobId);
    return read;
  }

  /** The job is written: what was read ahead of it is stale. */
  forget(jobId: number): void {
    this.ahead.delete(jobId);
  }

  defer(): void {
    this.deferred ??= new Map();
  }

  /** Rows written while deferring; a job written twice keeps its last row, as the statements would leave it. */
  note(rows: readonly JobRow[]): void {
    for (const row of rows) this.deferred?.set(Number(row.job_id), row);
  }

  /** Ends the deferral once what it holds is sent. */
  async end(): Promise<void> {
    await this.flush();
    this.deferred = undefined;
  }

  /** Sends the deferred rows (one `send` at a time, so a read never overtakes it). */
  async flush(): Promise<void> {
    for (;;) {
      const sending = this.sending;
      if (sending !== undefined) {
        await sending;
        continue;
      }
      if (this.deferred === undefined || this.deferred.size === 0) break;
      const rows = [...this.deferred.values()];
      this.deferred.clear();
      this.sending = this.send(rows).then(
        () => {
          this.sending = undefined;
        },
        (error: unknown) => {
          this.sending = undefined;
          this.refused = { error };
        },
      );
    }
    if (this.refused) throw this.refused.error;
  }
}
