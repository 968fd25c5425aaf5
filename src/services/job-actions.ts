import type { JobRecord } from '../domain/job.ts';
import { type ProcessProperty, unchangeableReason } from '../domain/process-properties.ts';
import { actionApplies, isFinal, type JobAction, notApplicableMessage, PENDING } from '../domain/job-status.ts';
import { unstorableText } from '../model/characters.ts';
import { applyOutItems, resubmitParameters } from '../domain/parameters.ts';
import { SYSTEM_SERVER } from '../engine/dispatcher.ts';
import type { Effects } from '../engine/effects.ts';
import { closeDescendants, killTree } from '../engine/chains.ts';
import { settlePending } from '../engine/pending.ts';
import { finishJob, rerun } from '../engine/transitions.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import type { JobStatus } from '../model/fields.ts';
import { dropUnchanged } from '../model/round-trip.ts';
import { isPlainObject } from '../model/validate.ts';
import type { Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import { renderJob } from './job-render.ts';
import { userCause } from './user-cause.ts';
import { type JobService, type JobServiceDeps, parseSubmitBody, SUBMIT_FIELDS, type SubmitOptions } from './jobs.ts';

interface Properties {
  /** The fields the body gives, in its order. */
  given: ProcessProperty[];
  options: SubmitOptions;
}

/** An action's body: the fields of a submit body (checked as there), none of them required. */
function parseProperties(body: unknown, defaultZone: string): Properties {
  const options = parseSubmitBody(body, defaultZone);
  const given = isPlainObject(body)
    ? (Object.keys(body).filter((k) => body[k] !== undefined) as ProcessProperty[])
    : [];
  return { given, options };
}

const UPDATE_FIELDS = new Set(['Status', 'Description', 'JobNotes', 'JobParameters']);
const UPDATE_STATUSES: readonly JobStatus[] = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'];

/** Holds a slot on an agent: the agent must hear of a kill or of being let go. */
const onAgent = (job: JobRecord) => job.processServer !== null && job.processServer !== SYSTEM_SERVER;

/**
 * The job actions of spec §3 with the statuses of docs/architecture.md §6. Each runs in the engine's serial loop, in its own
 * transaction; one that does not apply in the job's status is a 409 naming the status. Each takes an optional body
 * of process properties, applied in the same transaction (see domain/process-properties.ts).
 */
export class JobActions {
  private readonly d: JobServiceDeps;
  private readonly jobs: JobService;

  constructor(deps: JobServiceDeps, jobs: JobService) {
    this.d = deps;
    this.jobs = jobs;
  }

  /** Returns the job after the action, or the new job for restart and resubmit (`created`). */
  async act(
    p: Principal,
    idText: string,
    action: JobAction,
    body: unknown,
    query: Record<string, unknown>,
  ): Promise<{ job: Record<string, unknown>; created: boolean }> {
    const seen = await this.jobs.find(p, idText);
    this.jobs.require(p, 'Job', seen.partition, 'Control', `${action} Job:${seen.jobId}`);
    if (action === 'restart' || action === 'resubmit')
      this.jobs.require(p, 'JobDefinition', seen.partition, 'Submit', `submit ${seen.definition}`);
    // A resubmit body may be the job as GET renders it: what is not a submit field must be as it is (spec row 13).
    if (action === 'resubmit' && isPlainObject(body) && Object.keys(body).some((k) => !SUBMIT_FIELDS.has(k))) {
      const current = await this.jobs.get(p, idText);
      body = dropUnchanged(body, current, (k) => !SUBMIT_FIELDS.has(k) && k in current);
    }
    const resubmit = action === 'resubmit' ? parseSubmitBody(body, this.d.defaultTimeZone) : undefined;
    // Every other action takes an optional body of process properties (spec §4 row 13), applied with the action.
    const properties =
      action === 'resubmit' || action === 'updateJob' ? undefined : parseProperties(body, this.d.defaultTimeZone);
    const now = () => this.d.clock.now();
    const result = await this.d.engine.mutate(
      async (tx, fx) => {
        let job = await tx.jobs.get(seen.jobId);
        if (!job) throw notFound('Job', seen.jobId);
        if (!actionApplies(action, job.status)) throw conflict(notApplicableMessage(action, job.jobId, job.status));
        if (properties) job = await this.applyProperties(tx, p, job, action, properties, now(), fx);
        switch (action) {
          case 'cancel':
            await this.cancel(tx, job, query.cancelRecurrence === 'true', now(), fx);
            return job;
          case 'kill':
            await this.kill(tx, job, now(), fx);
            return job;
          case 'unknown':
            if (job.processServer === SYSTEM_SERVER) fx.stopSystem.push(job.jobId);
            else if (onAgent(job) && !isFinal(job.status))
              fx.messages.push({
                processServer: job.processServer as string,
                message: { type: 'abandon', jobId: job.jobId, attempt: job.attempt },
              });
            await finishJob(tx, job, { status: 'Unknown', notes: [`Set Unknown by ${p.user}`] }, now(), fx);
            return job;
          case 'hold':
            return this.save(tx, job, 'Held', now());
          case 'release':
            await settlePending(tx, job, now(), fx);
            await tx.jobs.updateMany([job]);
            return job;
          case 'runnow':
            job.data.runNow = true;
            fx.dispatch = true;
            return this.save(tx, job, 'Queued', now(), fx);
          case 'restart':
            return rerun(tx, job, now(), fx, {
              keepPlace: false,
              submittedBy: p.user,
              starts: 0,
              ...(properties?.options.requestedStart ? { at: properties.options.requestedStart.ms } : {}),
            });
          case 'resubmit':
            return this.resubmit(tx, p, job, resubmit as NonNullable<typeof resubmit>, fx);
          case 'updateJob':
            await this.updateJob(tx, job, body, now(), fx);
            return job;
          case 'disable':
            return this.save(tx, job, 'Disabled', now());
          case 'enable':
            return this.save(tx, job, 'Chained', now());
        }
      },
      userCause(p, action),
    );
    if (action === 'runnow') this.d.engine.addRunNow(result.jobId);
    const created = action === 'restart' || action === 'resubmit';
    return { job: renderJob(result, created ? [] : await this.d.store.jobs.listFiles(result.jobId)), created };
  }

  /** DELETE /Job/<id>: a final job and its files; a job that is not final → 409. */
  async delete(p: Principal, idText: string): Promise<void> {
    const seen = await this.jobs.find(p, idText);
    this.jobs.require(p, 'Job', seen.partition, 'Delete', `delete Job:${seen.jobId}`);
    await this.d.engine.mutate(async (tx, fx) => {
      const job = await tx.jobs.get(seen.jobId);
      if (!job) throw notFound('Job', seen.jobId);
      if (!isFinal(job.status))
        throw conflict(`Job:${job.jobId} is ${job.status}; only a job in a final status can be deleted`);
      await tx.jobs.delete([job.jobId]);
      fx.removeFiles.push(job.jobId);
    });
  }

  /**
   * Applies an action's body to the job before the action runs, in its transaction. Every field is checked first
   * (a field that cannot change in the job's status is 400 and nothing is done). Restart applies the body to the
   * job it creates: the finished job is left as it was and a copy carries the changes into `rerun`.
   */
  private async applyProperties(
    tx: Store,
    p: Principal,
    job: JobRecord,
    action: JobAction,
    properties: Properties,
    now: number,
    fx: Effects,
  ): Promise<JobRecord> {
    const { given, options } = properties;
    if (given.length === 0) return job;
    for (const field of given) {
      const reason = unchangeableReason(field, job.jobId, job.status, action);
      if (reason) throw invalid(reason);
    }
    const target: JobRecord = action === 'restart' ? { ...job, data: { ...job.data } } : job;
    for (const field of given)
      switch (field) {
        case 'Description':
          target.description = options.description ?? null;
          break;
        case 'Priority':
          if (options.priority !== undefined) target.priority = options.priority;
          break;
        case 'Queue':
          if (options.queue !== undefined) target.queue = (await this.jobs.queue(tx, p, options.queue)).key;
          break;
        case 'RequestedStartTime':
          if (options.requestedStart) {
            target.requestedStart = options.requestedStart.ms;
            if (target.status === 'Scheduled') fx.wakeAt.push(target.requestedStart);
          }
          break;
        case 'JobParameters':
          target.data.parameters = resubmitParameters(
            job.data.parameters,
            options.parameters,
            job.definition,
            job.data.zone,
          );
          break;
      }
    if (action !== 'restart') target.modificationTime = now;
    fx.dispatch = true;
    return target;
  }

  private async save(tx: Store, job: JobRecord, status: JobStatus, now: number, fx?: Effects): Promise<JobRecord> {
    job.status = status;
    job.modificationTime = now;
    await tx.jobs.updateMany([job]);
    if (fx && status === 'Queued') fx.dispatch = true;
    if (fx && status === 'Scheduled') fx.wakeAt.push(job.requestedStart);
    return job;
  }

  private async cancel(tx: Store, job: JobRecord, recurrence: boolean, now: number, fx: Effects): Promise<void> {
    // Cancel reaches a chain's (or step's) children, none of which has started.
    if (job.data.chain?.structure || job.data.chain?.step)
      await closeDescendants(tx, job, 'Canceled', now, `Canceled with Job:${job.jobId}`);
    await finishJob(tx, job, { status: 'Canceled' }, now, fx);
    if (!recurrence || job.jobGroup === null) return;
    const cancelable = PENDING.filter((s) => actionApplies('cancel', s));
    for (const other of await tx.jobs.listByStatus(cancelable, { jobGroup: job.jobGroup, limit: 10_000 }))
      await finishJob(tx, other, { status: 'Canceled', notes: [`Recurrence canceled with Job:${job.jobId}`] }, now, fx);
  }

  private async kill(tx: Store, job: JobRecord, now: number, fx: Effects): Promise<void> {
    if (job.data.chain?.structure || job.data.chain?.step) {
      await killTree(tx, job, now, fx);
      return;
    }
    if (job.processServer === SYSTEM_SERVER || job.data.scriptEnded) {
      fx.stopSystem.push(job.jobId);
      await finishJob(tx, job, { status: 'Killed' }, now, fx);
      return;
    }
    fx.messages.push({
      processServer: job.processServer as string,
      message: { type: 'kill', jobId: job.jobId, attempt: job.attempt },
    });
    await this.save(tx, job, 'Killing', now);
  }

  private async resubmit(
    tx: Store,
    p: Principal,
    job: JobRecord,
    options: ReturnType<typeof parseSubmitBody>,
    fx: Effects,
  ): Promise<JobRecord> {
    const definition = await tx.getObject('JobDefinition', job.definition);
    if (!definition) throw conflict(`The definition ${job.definition} of Job:${job.jobId} no longer exists`);
    const zone = options.requestedStart?.zone ?? job.data.zone;
    const parameters = resubmitParameters(job.data.parameters, options.parameters, job.definition, zone);
    return this.jobs.createFrom(
      tx,
      p,
      definition,
      {
        ...options,
        queue: options.queue ?? job.queue,
        priority: options.priority ?? job.priority,
        description: options.description === undefined ? job.description : options.description,
      },
      fx,
      parameters,
    );
  }

  /** External completion (spec §3): Status (a final status), Description, JobNotes (appended), Out parameters. */
  private async updateJob(tx: Store, job: JobRecord, body: unknown, now: number, fx: Effects): Promise<void> {
    if (job.data.spec.completionStrategy !== 'External')
      throw conflict(`Job:${job.jobId} does not have an External completion strategy; updateJob does not apply`);
    const b = body ?? {};
    if (!isPlainObject(b)) throw invalid('The body must be a JSON object');
    for (const k of Object.keys(b)) if (!UPDATE_FIELDS.has(k)) throw invalid(`Unknown field "${k}"`);
    const status = b.Status;
    if (status !== undefined && status !== null && !UPDATE_STATUSES.includes(status as JobStatus))
      throw invalid(`Field "Status" must be a final status: ${UPDATE_STATUSES.join(', ')}`);
    if (
      b.Description !== undefined &&
      b.Description !== null &&
      (typeof b.Description !== 'string' || b.Description.length > 255)
    )
      throw invalid('Field "Description" must be text of at most 255 characters');
    const notes =
      b.JobNotes === undefined || b.JobNotes === null ? [] : Array.isArray(b.JobNotes) ? b.JobNotes : [b.JobNotes];
    if (!notes.every((n) => typeof n === 'string' && n.length <= 4000))
      throw invalid('Field "JobNotes" must be a note or a list of notes of at most 4000 characters');
    if (job.data.notes.length + notes.length > 1000) throw invalid('Field "JobNotes": a job keeps at most 1000 notes');
    for (const [field, text] of [['Description', b.Description], ...notes.map((n) => ['JobNotes', n])]) {
      const bad = typeof text === 'string' ? unstorableText(text) : undefined;
      if (bad) throw invalid(`Field "${field}" ${bad}`);
    }
    applyOutItems(job.data.parameters, b.JobParameters, job.data.zone);
    if (b.Description !== undefined) job.description = b.Description as string | null;
    job.data.notes.push(...(notes as string[]));
    if (status === undefined || status === null) {
      job.modificationTime = now;
      await tx.jobs.updateMany([job]);
      return;
    }
    if (onAgent(job) && !job.data.scriptEnded)
      fx.messages.push({
        processServer: job.processServer as string,
        message: { type: 'abandon', jobId: job.jobId, attempt: job.attempt },
      });
    await finishJob(tx, job, { status: status as JobStatus }, now, fx);
  }
}
