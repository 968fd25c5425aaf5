import { type DeadlineAlertKind, type DeadlineRule, judgeRun } from '../domain/deadline.ts';
import type { JobRecord } from '../domain/job.ts';
import type { Store, StoredObject } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import { DEFAULT_ALERT_REPLY, raiseAlert } from './alerts.ts';

/** What a deadline alert says of its run. */
export interface DeadlineAlertFacts {
  deadline: StoredObject<'Deadline'>;
  rule: DeadlineRule;
  jobId: number;
  kind: DeadlineAlertKind;
  /** The run's deadline (epoch ms). */
  due: number;
  /** Its estimated end (P95) when the judgement was made; null when it had none. */
  estimatedEnd: number | null;
}

/**
 * Raises `f.kind` for its run in `tx`, when the run, read again in this transaction, is still due it and has not
 * had it: the mark on the run (`data.deadlineAlerts`) and the alert commit together, so a run gets each kind once
 * however many checks, restarts or nodes look at it (docs/architecture.md §8c). Answers whether it raised it.
 */
export async function raiseDeadlineAlert(tx: Store, f: DeadlineAlertFacts, now: number): Promise<boolean> {
  const job = await tx.jobs.get(f.jobId);
  if (!job) return false;
  const marks = job.data.deadlineAlerts?.[f.deadline.key] ?? [];
  const judged = judgeRun({ status: job.status, runEnd: job.runEnd, marks }, f.due, f.rule.leadMs, f.estimatedEnd, now);
  if (judged.raise !== f.kind) return false;
  const deadlineAlerts = { ...job.data.deadlineAlerts, [f.deadline.key]: [...marks, f.kind] };
  await tx.jobs.updateMany([{ ...job, data: { ...job.data, deadlineAlerts } }]);
  const vars = {
    kind: f.kind,
    jobid: String(job.jobId),
    jobdefinition: job.definition,
    deadline: f.deadline.key,
    alertSource: `Deadline:${f.deadline.key}`,
  };
  await raiseAlert(
    tx,
    {
      source: f.deadline,
      sourceObject: `Job:${job.jobId}`,
      text: alertText(f, job),
      replyExpression: DEFAULT_ALERT_REPLY,
      vars,
      zone: f.rule.zone,
      address: null,
      escalation: f.deadline.data.AlertEscalation ?? null,
    },
    now,
  );
  return true;
}

/** The alert's text: its kind first (receivers tell the kinds apart by it), then the run, the estimate, the deadline. */
function alertText(f: DeadlineAlertFacts, job: JobRecord): string {
  const at = (ms: number) => formatInstant(ms, f.rule.zone);
  const run = `Job:${job.jobId} (${job.definition})`;
  const by = `EndBy ${at(f.due)} of deadline ${f.deadline.key}`;
  switch (f.kind) {
    case 'DeadlineAtRisk':
      return `DeadlineAtRisk: ${run} is expected to end ${f.estimatedEnd === null ? 'late' : at(f.estimatedEnd)}, later than LeadMinutes ${f.rule.leadMs / 60_000} before ${by}`;
    case 'DeadlineMissed':
      return `DeadlineMissed: ${run} had not ended by ${by} (status ${job.status})`;
    case 'DeadlineMet':
      return `DeadlineMet: ${run} ended ${job.runEnd === null ? '' : `${at(job.runEnd)}, `}in time for ${by}`;
  }
}
