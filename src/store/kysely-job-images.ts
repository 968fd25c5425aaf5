import { changedColumns, type JobRow, UPDATED, type UpdatedColumn, wholeRow } from './kysely-job-rows.ts';

/**
 * SQLite, in a transaction: each job's row as the database holds it, read or written by this transaction, which
 * holds the only writer, so nothing else changes the row meanwhile. A write then names only the columns that
 * changed (`changedColumns`); a job the transaction has not seen is written whole.
 */
export class JobRowImages {
  private readonly rows = new Map<number, JobRow>();

  /** A row the transaction read (kept only when read whole) or wrote. */
  saw(row: JobRow): void {
    if (wholeRow(row)) this.rows.set(Number(row.job_id), row);
  }

  forget(jobId: number): void {
    this.rows.delete(jobId);
  }

  /** The columns a write of `row` must name: every `UPDATED` column when the job's row is not known. */
  columnsToWrite(row: JobRow): readonly UpdatedColumn[] {
    const before = this.rows.get(Number(row.job_id));
    return before === undefined ? UPDATED : changedColumns(before, row);
  }
}
