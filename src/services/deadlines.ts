import {
  type DeadlineAlertKind,
  type DeadlineState,
  type Estimator,
  runDeadline,
  runState,
  todaysDeadline,
} from '../domain/deadline.ts';
import { isFinal } from '../domain/job-status.ts';
import { deadlineRule, isRun, RUNS_LOOKED_AT } from '../engine/engine.ts';
import { can, type Principal } from '../security/privileges.ts';
import { listAllObjects } from '../store/all-objects.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { formatInstant } from '../time/date-format.ts';

/** One deadline today, as the Deadlines page shows it (`GET /deadlines`). */
export interface DeadlineToday {
  Deadline: string;
  Description: string | null;
  JobDefinition: string;
  /** Today's EndBy (the local day of now in the deadline's zone). */
  EndBy: string;
  LeadMinutes: number;
  /** Whether the deadline applies today (its TimeWindow). */
  Applies: boolean;
  State: DeadlineState;
  /** Today's run: the newest run whose deadline is today's EndBy. */
  Job: number | null;
  JobStatus: string | null;
  /** The run's estimated end, P95 basis (the one its alerts are judged by); its end once it ended. */
  EstimatedEnd: string | null;
  /** The deadline alerts the run got. */
  Alerts: DeadlineAlertKind[];
}

export interface DeadlinesToday {
  Time: string;
  Deadlines: DeadlineToday[];
}

/**
 * Today's deadlines with their state (docs/architecture.md §8c), judged by the rules the engine raises their alerts
 * by. A caller sees a deadline when it may view it and the jobs of its definition's partition.
 */
export class DeadlineService {
  private readonly d: { store: Store; clock: Clock; defaultTimeZone: string; estimator?: Estimator };

  constructor(deps: { store: Store; clock: Clock; defaultTimeZone: string; estimator?: Estimator }) {
    this.d = deps;
  }

  async today(p: Principal): Promise<DeadlinesToday> {
    const now = this.d.clock.now();
    const visible = (await listAllObjects(this.d.store, 'Deadline')).filter(
      (d) =>
        can(p, 'Deadline', d.partition, 'View') &&
        can(p, 'Job', String(d.data.JobDefinition).split('.')[0] ?? '', 'View'),
    );
    const rows: Array<DeadlineToday & { due: number }> = [];
    for (const d of visible) rows.push(await this.one(d, now));
    rows.sort((a, b) => a.due - b.due || a.Deadline.localeCompare(b.Deadline));
    return { Time: formatInstant(now, this.d.defaultTimeZone), Deadlines: rows.map(({ due: _, ...row }) => row) };
  }

  private async one(deadline: StoredObject<'Deadline'>, now: number): Promise<DeadlineToday & { due: number }> {
    const rule = await deadlineRule(this.d.store, deadline);
    const { due, applies } = todaysDeadline(rule, now);
    const definition = String(deadline.data.JobDefinition);
    const base = {
      due,
      Deadline: deadline.key,
      Description: deadline.data.Description ?? null,
      JobDefinition: definition,
      EndBy: formatInstant(due, rule.zone),
      LeadMinutes: rule.leadMs / 60_000,
      Applies: applies,
    };
    const none = { Job: null, JobStatus: null, EstimatedEnd: null, Alerts: [] };
    if (!applies) return { ...base, ...none, State: 'NotToday' };
    const runs = await this.d.store.jobs.listJobs({ definition, limit: RUNS_LOOKED_AT });
    const run = runs.find((j) => isRun(j) && runDeadline(rule, j.requestedStart) === due);
    if (!run) return { ...base, ...none, State: 'NoRun' };
    const marks = run.data.deadlineAlerts?.[deadline.key] ?? [];
    const estimate =
      isFinal(run.status) || !this.d.estimator
        ? undefined
        : (await this.d.estimator.estimate(run.jobId, 'P95'))?.EstimatedEnd;
    const end = isFinal(run.status) ? run.runEnd : (estimate ?? null);
    return {
      ...base,
      State: runState({ status: run.status, runEnd: run.runEnd, marks }, due, rule.leadMs, estimate, now),
      Job: run.jobId,
      JobStatus: run.status,
      EstimatedEnd: end === null ? null : formatInstant(end, rule.zone),
      Alerts: [...marks],
    };
  }
}
