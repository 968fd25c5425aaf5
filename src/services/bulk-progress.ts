import { randomUUID } from 'node:crypto';
import type { BulkAnswer } from '../domain/bulk.ts';
import { notFound } from '../errors.ts';
import type { Principal } from '../security/privileges.ts';

/**
 * The bulk requests this server node runs or ran lately (docs/architecture.md §6), for `GET /Job/bulk/requests/<RequestId>`.
 * Kept in this node's memory only: a restart forgets them, and another node of a cluster does not know them (the
 * jobs' history keeps what was done either way).
 */

/** Finished requests kept for their answers; the oldest is forgotten first. */
const KEPT_FINISHED = 200;

export interface BulkRun {
  RequestId: string;
  Action: string;
  /** Running while jobs are still being acted on; Done with the final answer; Failed with its Message. */
  Status: 'Running' | 'Done' | 'Failed';
  /** Jobs looked at so far (acted on or skipped), of Matched. */
  Processed: number;
  Message?: string;
  answer: BulkAnswer;
  /** Who asked: only they read its progress. */
  user: string;
}

export class BulkProgress {
  private readonly runs = new Map<string, BulkRun>();

  start(principal: Principal, action: string, answer: BulkAnswer): BulkRun {
    const run: BulkRun = {
      RequestId: randomUUID(),
      Action: action,
      Status: 'Running',
      Processed: 0,
      answer,
      user: principal.user,
    };
    this.runs.set(run.RequestId, run);
    return run;
  }

  /** Marks a run finished, forgetting the oldest finished ones beyond KEPT_FINISHED. */
  finish(run: BulkRun, failure?: string): void {
    run.Status = failure === undefined ? 'Done' : 'Failed';
    if (failure !== undefined) run.Message = failure;
    const finished = [...this.runs.values()].filter((r) => r.Status !== 'Running');
    for (const old of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED))) this.runs.delete(old.RequestId);
  }

  /** The progress and, once done, the answer of a request of the caller; 404 for another's or an unknown one. */
  read(principal: Principal, requestId: string): Record<string, unknown> {
    const run = this.runs.get(requestId);
    if (!run || run.user !== principal.user) throw notFound('BulkRequest', requestId);
    const { user: _user, answer, ...shown } = run;
    return { ...shown, ...answer };
  }
}
