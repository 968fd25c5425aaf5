/**
 * Deadlines (docs/architecture.md §8c), pure: which instant a run must end by, whether a deadline applies on a day
 * (decided by the time-window functions themselves, never a copy of their rules), which alert a run is due and
 * when to look at it again, and the state a run shows on the Deadlines page.
 */
import { MS_PER_DAY } from '../time/civil.ts';
import { isFinal, type JobStatus } from './job-status.ts';
import { localDay, localToInstant, toLocal } from './local-time.ts';
import { openIntervals, type WindowSpec } from './time-window.ts';

export const DEADLINE_ALERT_KINDS = ['DeadlineAtRisk', 'DeadlineMissed', 'DeadlineMet'] as const;
export type DeadlineAlertKind = (typeof DEADLINE_ALERT_KINDS)[number];

/** What the Deadlines page says of a deadline today. */
export const DEADLINE_STATES = ['OnTime', 'AtRisk', 'Missed', 'Met', 'Ended', 'NoRun', 'NotToday'] as const;
export type DeadlineState = (typeof DEADLINE_STATES)[number];

/** A job's estimate (epoch ms), as the estimate service answers it from the runtime statistics. */
export interface JobEstimate {
  EstimatedStart: number | null;
  EstimatedEnd: number | null;
  Basis: 'P50' | 'P95' | 'None';
  Progress: number | null;
}

/** The estimate service as deadlines use it (services/job-estimates.ts). */
export interface Estimator {
  estimate(jobId: number, basis: 'P50' | 'P95'): Promise<JobEstimate | undefined>;
}

/** A Deadline object's rule, its window loaded. */
export interface DeadlineRule {
  /** `HH:MM`. */
  endBy: string;
  zone: string;
  leadMs: number;
  /** The days it applies: those on which this window is open at some instant; every day when absent. */
  window?: WindowSpec;
}

/** What judging a run needs of it. */
export interface RunView {
  status: JobStatus;
  runEnd: number | null;
  /** The deadline alerts this run got already (of this deadline). */
  marks: readonly DeadlineAlertKind[];
}

export interface Judgement {
  /** The alert the run is due now, if any. */
  raise?: DeadlineAlertKind;
  /** When the run must be looked at again, if nothing about it changes before; none when it needs no more looks. */
  nextCheckAt?: number;
}

/**
 * The estimate is looked at again no sooner than this after a look that found it just under the line: an estimate
 * given in whole seconds could otherwise ask for a look every millisecond.
 */
const MIN_STEP_MS = 1000;

const endByMs = (endBy: string): number => {
  const [h, m] = endBy.split(':').map(Number);
  return ((h ?? 0) * 60 + (m ?? 0)) * 60_000;
};

/** Whether the rule applies on local day `day` (days since 1970-01-01 in its zone): its window opens that day. */
export function appliesOn(rule: DeadlineRule, day: number): boolean {
  if (!rule.window) return true;
  const from = localToInstant(rule.zone, day * MS_PER_DAY);
  const to = localToInstant(rule.zone, (day + 1) * MS_PER_DAY);
  return openIntervals(rule.window, from, to).length > 0;
}

/**
 * The instant a run requested to start at `requested` must have ended by: the first EndBy (local time of the
 * rule's zone) after it. Undefined when that EndBy falls on a day the rule does not apply: the run has no deadline.
 */
export function runDeadline(rule: DeadlineRule, requested: number): number | undefined {
  const local = toLocal(rule.zone, requested);
  const offset = endByMs(rule.endBy);
  let day = Math.floor(local / MS_PER_DAY);
  if (day * MS_PER_DAY + offset <= local) day++;
  return appliesOn(rule, day) ? localToInstant(rule.zone, day * MS_PER_DAY + offset) : undefined;
}

/** Today's EndBy (the local day of `now` in the rule's zone), and whether the rule applies today. */
export function todaysDeadline(rule: DeadlineRule, now: number): { due: number; applies: boolean } {
  const day = localDay(rule.zone, now);
  return { due: localToInstant(rule.zone, day * MS_PER_DAY + endByMs(rule.endBy)), applies: appliesOn(rule, day) };
}

/**
 * The alert a run of deadline `due` is due at `now`, each kind once per run (`marks`):
 * - DeadlineMissed: `due` passed and the run is not final (or it ended after `due`, unseen at `due`);
 * - DeadlineAtRisk: not final, and its estimated end (P95) is later than `due − lead`;
 * - DeadlineMet: it ended Completed by `due` after a DeadlineAtRisk, so the on-call may stand down.
 * The next look: `due`, and while not at risk the first moment its estimate could cross the line. The estimate of
 * a run whose statuses do not change never grows faster than the clock (what is left of it only shrinks), so it
 * cannot cross the line before `now + (line − estimate)`; a status change is looked at when it happens.
 */
export function judgeRun(
  run: RunView,
  due: number,
  leadMs: number,
  estimatedEnd: number | null | undefined,
  now: number,
): Judgement {
  const marked = (k: DeadlineAlertKind) => run.marks.includes(k);
  if (marked('DeadlineMissed') || marked('DeadlineMet')) return {};
  if (isFinal(run.status)) {
    if (run.runEnd !== null && run.runEnd > due) return { raise: 'DeadlineMissed' };
    return marked('DeadlineAtRisk') && run.status === 'Completed' ? { raise: 'DeadlineMet' } : {};
  }
  if (now >= due) return { raise: 'DeadlineMissed' };
  if (marked('DeadlineAtRisk')) return { nextCheckAt: due };
  const line = due - leadMs;
  if (estimatedEnd === null || estimatedEnd === undefined) return { nextCheckAt: due };
  if (estimatedEnd > line) return { raise: 'DeadlineAtRisk', nextCheckAt: due };
  return { nextCheckAt: Math.min(due, now + Math.max(line - estimatedEnd + 1, MIN_STEP_MS)) };
}

/** What the Deadlines page shows of a run of deadline `due` at `now` (the same line as judgeRun's). */
export function runState(
  run: RunView,
  due: number,
  leadMs: number,
  estimatedEnd: number | null | undefined,
  now: number,
): DeadlineState {
  if (isFinal(run.status)) {
    if (run.runEnd !== null && run.runEnd > due) return 'Missed';
    return run.status === 'Completed' ? 'Met' : 'Ended';
  }
  if (now >= due) return 'Missed';
  if (estimatedEnd === null || estimatedEnd === undefined)
    return run.marks.includes('DeadlineAtRisk') ? 'AtRisk' : 'OnTime';
  return estimatedEnd > due - leadMs ? 'AtRisk' : 'OnTime';
}
