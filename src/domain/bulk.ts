/**
 * Bulk actions (docs/architecture.md §6): one request acts on many jobs, each as if alone. What the request may hold
 * and what it answers; pure.
 */

/** At most this many jobs per request: a filter matching more, or more ids, is refused (400 naming it). */
export const MAX_BULK_JOBS = 10_000;

/** A job the bulk action did not act on, and why (the message a single action would have given). */
export interface BulkSkip {
  Job: number;
  Reason: string;
}

/** The answer of a bulk action (or what a dry run says would happen). */
export interface BulkAnswer {
  Matched: number;
  Done: number;
  Skipped: BulkSkip[];
  DryRun: boolean;
}

/** The history detail of a job acted on in bulk: the action, the request and the comment given with it. */
export function bulkDetail(action: string, requestId: string, comment: string | undefined): string {
  return `${action} (bulk request ${requestId})${comment ? `: ${comment}` : ''}`;
}
