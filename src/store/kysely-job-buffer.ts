import type { JobRow } from './kysely-job-rows.ts';

/**
 * What a flush sends: the new rows (inserted) and the rows written back (updated), either may be empty, and the
 * history rows of a commit when the flush was asked for with them (`flush(history)`).
 */
export type HeldRows<H> = { inserted: JobRow[]; updated: JobRow[]; history?: H };

/**
 * What a transaction's job store holds back to save round trips on PostgreSQL (docs/architecture.md §2, store):
 * rows read ahead for the reports of a batch, each handed out once and dropped when its job is written; new jobs
 * whose ids were taken ahead (`expectNew`), not inserted yet; and, while updates are deferred, the rows written and
 * not yet sent. What is held goes out together (one `send`, one statement on PostgreSQL) before anything else reads
 * jobs and before the commit. A held write the database refused fails every later flush, so the transaction cannot
 * commit. `H`: the history rows a flush may carry along (the store's column arrays), sent in the same round trip.
 */
export class JobRowBuffer<H> {
  private readonly ahead = new Map<number, JobRow>();
  /** New jobs not inserted yet; a later write of one of them changes the row to insert. */
  private readonly inserted = new Map<number, JobRow>();
  private deferred: Map<number, JobRow> | undefined;
  private sending: Promise<void> | undefined;
  private refused: { error: unknown } | undefined;
  private readonly send: (rows: HeldRows<H>) => Promise<unknown>;

  constructor(send: (rows: HeldRows<H>) => Promise<unknown>) {
    this.send = send;
  }

  /** Of these jobs, those not read ahead yet. */
  missing(jobIds: readonly number[]): number[] {
    return [...new Set(jobIds)].filter((id) => !this.ahead.has(id));
  }

  readAhead(rows: readonly JobRow[]): void {
    for (const row of rows) this.ahead.set(Number(row.job_id), row);
  }

  /** The job's row as this transaction last wrote it (held), or as read ahead (handed out once). */
  take(jobId: number): JobRow | undefined {
    const written = this.inserted.get(jobId) ?? this.deferred?.get(jobId);
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

  /** A new job, inserted at the next flush. */
  hold(row: JobRow): void {
    this.inserted.set(Number(row.job_id), row);
  }

  /**
   * Rows written: those of new jobs not inserted yet change the rows to insert; the others are noted while
   * deferring (a job written twice keeps its last row, as the statements would leave it). Answers the rows still
   * to write now (not deferring).
   */
  note(rows: readonly JobRow[]): JobRow[] {
    const now: JobRow[] = [];
    for (const row of rows) {
      const id = Number(row.job_id);
      if (this.inserted.has(id)) this.inserted.set(id, row);
      else if (this.deferred) this.deferred.set(id, row);
      else now.push(row);
    }
    return now;
  }

  /**
   * Sends what is held (one `send` at a time, so a read never overtakes it), and `history` with it: after any send
   * under way, in the same send as what is held then, or alone when nothing is.
   */
  async flush(history?: H): Promise<void> {
    let along = history;
    for (;;) {
      const sending = this.sending;
      if (sending !== undefined) {
        await sending;
        continue;
      }
      const held = this.inserted.size > 0 || (this.deferred !== undefined && this.deferred.size > 0);
      if (!held && along === undefined) break;
      const rows: HeldRows<H> = {
        inserted: [...this.inserted.values()],
        updated: [...(this.deferred?.values() ?? [])],
      };
      if (along !== undefined) rows.history = along;
      along = undefined;
      this.inserted.clear();
      this.deferred?.clear();
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
