import type { JobParameter, JobRecord } from '../domain/job.ts';
import { NOT_STARTED } from '../domain/process-properties.ts';
import { resubmitParameters } from '../domain/parameters.ts';
import type { Effects, Kernel } from '../engine/kernel.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import type { JobStatus } from '../model/fields.ts';
import { businessKey } from '../model/keys.ts';
import { keyShapeOf, requireForm } from '../model/registry.ts';
import { validateForm } from '../model/validate.ts';
import type { Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import type { JobService, JobServiceDeps } from './jobs.ts';
import { userCause } from './user-cause.ts';

const FORM = requireForm('Job', 'modify');

/**
 * Statuses where a changed start time or queue sends the job through the pending flow again (Kernel.settle: start
 * time, events, window, queue hold), so that dispatch and the wake-ups see it as they see a submit. A Held job is
 * settled by its release; a chain's step or call by its step.
 */
const SETTLE_AGAIN: ReadonlySet<JobStatus> = new Set([
  'Scheduled',
  'Queued',
  'QueueHeld',
  'EventWait',
  'LockWait',
  'Overdue',
]);
/** A chain's step and call jobs get their start time when their step runs. */
const IN_CHAIN: ReadonlySet<JobStatus> = new Set(['Chained', 'Disabled']);

/** One change: the field, and its value before and after in words (for the job's history). */
interface Change {
  field: string;
  before: string;
  after: string;
}

const shown = (v: unknown): string => (v === null || v === undefined || v === '' ? '(none)' : String(v));
const inValue = (p: JobParameter): string =>
  shown(p.InValueDate ? formatInstant(p.InValueDate.ms, p.InValueDate.zone) : (p.InValueString ?? p.InValueNumber));

/**
 * `PATCH /Job/<id>` (docs/architecture.md §6): changes a job that has not started: its requested start, queue,
 * priority, description and In values, checked as a submit checks them. Each change is kept in the job's history
 * with the user (before → after). A job handed to a process server, or later, is 409 and nothing changes.
 */
export class JobModify {
  private readonly deps: JobServiceDeps;
  private readonly jobs: JobService;

  constructor(deps: JobServiceDeps, jobs: JobService) {
    this.deps = deps;
    this.jobs = jobs;
  }

  /** The checks that need no body: the job is visible (else 404) and the caller holds Control on it (else 403). */
  async authorize(principal: Principal, idText: string): Promise<JobRecord> {
    const job = await this.jobs.find(principal, idText);
    this.jobs.require(principal, 'Job', job.partition, 'Control', `modify Job:${job.jobId}`);
    return job;
  }

  async modify(principal: Principal, idText: string, body: unknown): Promise<Record<string, unknown>> {
    const seen = await this.authorize(principal, idText);
    const v = validateForm(FORM, body, { defaultZone: this.deps.defaultTimeZone, keyShapeOf });
    const given = Object.keys(v).filter((k) => v[k] !== undefined);
    if (given.length === 0) throw invalid(`Give at least one field to change: ${[...FORM.byName.keys()].join(', ')}`);
    await this.deps.engine.mutate(
      async (tx, effects, kernel) => {
        const job = await tx.jobs.get(seen.jobId);
        if (!job) throw notFound('Job', seen.jobId);
        if (!NOT_STARTED.has(job.status))
          throw conflict(`Job:${job.jobId} is ${job.status}; only a job that has not started can be changed`);
        if (given.includes('RequestedStartTime') && IN_CHAIN.has(job.status))
          throw invalid(
            `Field "RequestedStartTime": Job:${job.jobId} is ${job.status}; its chain's step sets its start`,
          );
        const changes = await this.apply(tx, principal, job, v, body);
        await this.record(tx, principal, job, changes);
        if (changes.some((c) => c.field === 'Queue' || c.field === 'RequestedStartTime'))
          await this.settleAgain(tx, kernel, job, effects);
        await tx.jobs.updateMany([job]);
        effects.dispatch = true;
      },
      userCause(principal, 'modify', null, { type: 'Job', key: String(seen.jobId), uniqueId: seen.uniqueId }),
    );
    return this.jobs.get(principal, idText);
  }

  /** Applies the given fields to `job` (every check first: a refused field leaves it as it was); the changes made. */
  private async apply(
    tx: Store,
    principal: Principal,
    job: JobRecord,
    v: Record<string, unknown>,
    body: unknown,
  ): Promise<Change[]> {
    const next = { ...job };
    const changes: Change[] = [];
    const zone = job.data.zone;
    if (typeof v.Queue === 'string') {
      const queue = (await this.jobs.queue(tx, principal, v.Queue)).key;
      if (queue !== job.queue)
        changes.push({ field: 'Queue', before: businessKey('Queue', job.queue), after: businessKey('Queue', queue) });
      next.queue = queue;
    }
    const start = v.RequestedStartTime as { ms: number; zone: string } | null | undefined;
    if (start) {
      if (start.ms !== job.requestedStart)
        changes.push({
          field: 'RequestedStartTime',
          before: formatInstant(job.requestedStart, zone),
          after: formatInstant(start.ms, zone),
        });
      next.requestedStart = start.ms;
    }
    if (typeof v.Priority === 'number') {
      if (v.Priority !== job.priority)
        changes.push({ field: 'Priority', before: String(job.priority), after: String(v.Priority) });
      next.priority = v.Priority;
    }
    if (v.Description !== undefined) {
      const description = typeof v.Description === 'string' ? v.Description : null;
      if (description !== job.description)
        changes.push({ field: 'Description', before: shown(job.description), after: shown(description) });
      next.description = description;
    }
    let parameters = job.data.parameters;
    if (v.JobParameters !== undefined && v.JobParameters !== null) {
      const items = (body as Record<string, unknown>).JobParameters;
      parameters = resubmitParameters(job.data.parameters, items, job.definition, zone);
      for (const [i, p] of parameters.entries()) {
        const before = job.data.parameters[i];
        if (before && inValue(before) !== inValue(p))
          changes.push({ field: `JobParameters ${p.Name}`, before: inValue(before), after: inValue(p) });
      }
    }
    // Everything was checked: now the job itself changes.
    job.queue = next.queue;
    job.requestedStart = next.requestedStart;
    job.priority = next.priority;
    job.description = next.description;
    job.data.parameters = parameters;
    job.modificationTime = this.deps.clock.now();
    return changes;
  }

  /** One history entry per change, in the job's status, naming the user and the values before and after. */
  private async record(tx: Store, principal: Principal, job: JobRecord, changes: Change[]): Promise<void> {
    const time = job.modificationTime;
    await tx.jobs.insertHistory(
      changes.map((c) => ({
        jobId: job.jobId,
        entry: {
          time,
          from: job.status,
          to: job.status,
          user: principal.user,
          cause: 'modify',
          detail: `${c.field}: ${c.before} → ${c.after}`,
        },
      })),
    );
  }

  /** A job waiting for its start or its turn goes through the pending flow again with its new start and queue. */
  private async settleAgain(tx: Store, kernel: Kernel, job: JobRecord, effects: Effects): Promise<void> {
    if (!SETTLE_AGAIN.has(job.status)) return;
    await kernel.settle(tx, job, this.deps.clock.now(), effects);
  }
}
