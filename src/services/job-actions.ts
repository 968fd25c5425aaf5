import type { JobRecord } from '../domain/job.ts';
import { type ProcessProperty, unchangeableReason } from '../domain/process-properties.ts';
import {
  actionApplies,
  isKernelAction,
  type JobAction,
  jobAction,
  notApplicableMessage,
} from '../domain/job-actions.ts';
import { isFinal } from '../domain/job-status.ts';
import { applyOutItems, resubmitParameters } from '../domain/parameters.ts';
import type { Effects, Kernel } from '../engine/kernel.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import type { JobStatus } from '../model/fields.ts';
import { dropUnchanged } from '../model/round-trip.ts';
import { requireType } from '../model/registry.ts';
import { isPlainObject } from '../model/validate.ts';
import type { Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import { renderJob } from './job-render.ts';
import { userCause } from './user-cause.ts';
import {
  COMMENT_REQUIRED,
  type Completion,
  parseComment,
  parseCompletion,
  parseSubmitBody,
  SUBMIT_FIELDS,
  type SubmitOptions,
} from './job-bodies.ts';
import type { JobService, JobServiceDeps } from './jobs.ts';

/** Deleting a job needs Delete on it (it is no action of the table: it applies to final jobs and ends them all). */
const DELETE_PRIVILEGES = [{ type: 'Job', privilege: 'Delete' }] as const;

/** A job keeps at most as many notes as the Job's JobNotes field holds. */
const MAX_NOTES = (() => {
  const kind = requireType('Job').byName.get('JobNotes')?.kind;
  return kind?.kind === 'list' ? kind.maxItems : 1000;
})();

/** An action's body as `parseBody` read it: the part its form fills. */
export interface ParsedBody {
  submit: SubmitOptions | undefined;
  properties: Properties | undefined;
  completion: Completion | undefined;
  /** markcompleted and markerror: why (required; checked once the action applies, so a wrong status is 409 first). */
  comment: string | undefined;
}

interface Properties {
  /** The fields the body gives, in its order. */
  given: ProcessProperty[];
  options: SubmitOptions;
}

/** An action's body: the fields of a submit body (checked as there), none of them required. */
function parseProperties(body: unknown, defaultZone: string): Properties {
  const options = parseSubmitBody(body, defaultZone, 'properties');
  const given = isPlainObject(body)
    ? (Object.keys(body).filter((k) => body[k] !== undefined) as ProcessProperty[])
    : [];
  return { given, options };
}

/**
 * The job actions (docs/architecture.md §6), as the action table declares them (domain/job-actions.ts: statuses, privileges, body):
 * the checks and the body here, the effect in the kernel (`Kernel.act`, or a submit for resubmit). Each runs in the engine's serial loop, in its own
 * transaction; one that does not apply in the job's status is a 409 naming the status. Each takes an optional body
 * of process properties, applied in the same transaction (see domain/process-properties.ts).
 */
export class JobActions {
  private readonly deps: JobServiceDeps;
  private readonly jobs: JobService;

  constructor(deps: JobServiceDeps, jobs: JobService) {
    this.deps = deps;
    this.jobs = jobs;
  }

  /**
   * The checks of an action that need no body (docs/architecture.md §10): the job exists and the caller may view
   * it (else 404) and holds the privileges the action table names (else 403). The JSON interface runs them before
   * it reads the body, and `act` again. Returns the job as it was read.
   */
  async authorize(principal: Principal, idText: string, action: JobAction | 'delete'): Promise<JobRecord> {
    const seen = await this.jobs.find(principal, idText);
    this.requirePrivileges(principal, seen, action);
    return seen;
  }

  /** The privileges the action table names for `action` on `job` (else 403); a bulk action checks each job so. */
  requirePrivileges(principal: Principal, job: JobRecord, action: JobAction | 'delete'): void {
    const privileges = action === 'delete' ? DELETE_PRIVILEGES : jobAction(action).privileges;
    for (const { type, privilege } of privileges)
      this.jobs.require(
        principal,
        type,
        job.partition,
        privilege,
        type === 'Job' ? `${action} Job:${job.jobId}` : `${privilege.toLowerCase()} ${job.definition}`,
      );
  }

  /** Returns the job after the action, or the new job for the actions that create one (`created`). */
  async act(
    principal: Principal,
    idText: string,
    action: JobAction,
    body: unknown,
    query: Record<string, unknown>,
  ): Promise<{ job: Record<string, unknown>; created: boolean }> {
    const spec = jobAction(action);
    const seen = await this.authorize(principal, idText, action);
    // A resubmit body may be the job as GET renders it: what is not a submit field must be as it is.
    if (spec.body === 'submit' && isPlainObject(body) && Object.keys(body).some((k) => !SUBMIT_FIELDS.has(k))) {
      const current = await this.jobs.get(principal, idText);
      body = dropUnchanged(body, current, (k) => !SUBMIT_FIELDS.has(k) && Object.hasOwn(current, k));
    }
    const parsed = this.parseBody(action, body);
    const result = await this.deps.engine.mutate(
      (tx, effects, kernel) => this.actOn(tx, effects, kernel, principal, seen.jobId, action, parsed, query),
      // markcompleted's and markerror's comment is the audit entry's detail: why a person set the status by hand.
      userCause(principal, action, parsed.comment ?? null),
    );
    return {
      job: renderJob(result, spec.creates ? [] : await this.deps.store.jobs.listFiles(result.jobId)),
      created: spec.creates,
    };
  }

  /** An action's body, checked (400) before any job is read: the form the action table names for it. */
  parseBody(action: JobAction, body: unknown): ParsedBody {
    const spec = jobAction(action);
    const zone = this.deps.defaultTimeZone;
    return {
      submit: spec.body === 'submit' ? parseSubmitBody(body, zone) : undefined,
      // Process properties are applied with the action.
      properties: spec.body === 'properties' ? parseProperties(body, zone) : undefined,
      completion: spec.body === 'completion' ? parseCompletion(body, zone) : undefined,
      comment: spec.body === 'comment' ? parseComment(body) : undefined,
    };
  }

  /**
   * The action on one job inside the caller's transaction of the serial loop: the job as it is now, its status
   * checked (409), the body applied, the effect run. `act` runs it alone; a bulk action runs it for each job.
   */
  async actOn(
    tx: Store,
    effects: Effects,
    kernel: Kernel,
    principal: Principal,
    jobId: number,
    action: JobAction,
    parsed: ParsedBody,
    query: Record<string, unknown>,
  ): Promise<JobRecord> {
    const { submit, properties, completion, comment } = parsed;
    const now = () => this.deps.clock.now();
    let job = await tx.jobs.get(jobId);
    if (!job) throw notFound('Job', jobId);
    if (!actionApplies(action, job.status)) throw conflict(notApplicableMessage(action, job.jobId, job.status));
    if (jobAction(action).body === 'comment' && comment === undefined) throw invalid(COMMENT_REQUIRED);
    if (properties) job = await this.applyProperties(tx, principal, job, action, properties, now(), effects);
    // An action with a submit body is a submit: a new job from this one (resubmit).
    if (!isKernelAction(action))
      return this.resubmit(tx, kernel, principal, job, submit as NonNullable<typeof submit>, effects);
    const status = completion ? this.updateJob(job, completion) : undefined;
    return kernel.act(
      tx,
      job,
      action,
      {
        user: principal.user,
        cancelRecurrence: query.cancelRecurrence === 'true',
        ...(properties?.options.requestedStart ? { at: properties.options.requestedStart.ms } : {}),
        ...(status ? { status } : {}),
        ...(comment !== undefined ? { comment } : {}),
      },
      now(),
      effects,
    );
  }

  /** DELETE /Job/<id>: a final job and its files; a job that is not final → 409. */
  async delete(principal: Principal, idText: string): Promise<void> {
    const seen = await this.authorize(principal, idText, 'delete');
    await this.deps.engine.mutate(
      async (tx, effects, kernel) => {
        const job = await tx.jobs.get(seen.jobId);
        if (!job) throw notFound('Job', seen.jobId);
        if (!isFinal(job.status))
          throw conflict(`Job:${job.jobId} is ${job.status}; only a job in a final status can be deleted`);
        await kernel.remove(tx, [job.jobId], effects);
      },
      userCause(principal, 'delete', null, { type: 'Job', key: String(seen.jobId), uniqueId: null }),
    );
  }

  /**
   * Applies an action's body to the job before the action runs, in its transaction. Every field is checked first
   * (a field that cannot change in the job's status is 400 and nothing is done). Restart applies the body to the
   * job it creates: the finished job is left as it was and a copy carries the changes into `rerun`.
   */
  private async applyProperties(
    tx: Store,
    principal: Principal,
    job: JobRecord,
    action: JobAction,
    properties: Properties,
    now: number,
    effects: Effects,
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
          if (options.queue !== undefined) target.queue = (await this.jobs.queue(tx, principal, options.queue)).key;
          break;
        case 'RequestedStartTime':
          if (options.requestedStart) {
            target.requestedStart = options.requestedStart.ms;
            if (target.status === 'Scheduled') effects.wakeAt.push(target.requestedStart);
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
    effects.dispatch = true;
    return target;
  }

  private async resubmit(
    tx: Store,
    kernel: Kernel,
    principal: Principal,
    job: JobRecord,
    options: SubmitOptions,
    effects: Effects,
  ): Promise<JobRecord> {
    const definition = await tx.getObject('JobDefinition', job.definition);
    if (!definition) throw conflict(`The definition ${job.definition} of Job:${job.jobId} no longer exists`);
    const zone = options.requestedStart?.zone ?? job.data.zone;
    const parameters = resubmitParameters(job.data.parameters, options.parameters, job.definition, zone);
    return this.jobs.createFrom(
      tx,
      kernel,
      principal,
      definition,
      {
        ...options,
        queue: options.queue ?? job.queue,
        priority: options.priority ?? job.priority,
        description: options.description === undefined ? job.description : options.description,
      },
      effects,
      parameters,
    );
  }

  /**
   * External completion: Description, JobNotes (appended) and Out parameters are applied to the job here;
   * the Status (a final status) it returns is set by the kernel.
   */
  private updateJob(job: JobRecord, completion: Completion): JobStatus | undefined {
    if (job.data.spec.completionStrategy !== 'External')
      throw conflict(`Job:${job.jobId} does not have an External completion strategy; updateJob does not apply`);
    const { status, description, notes, outValues } = completion;
    if (job.data.notes.length + notes.length > MAX_NOTES)
      throw invalid(`Field "JobNotes": a job keeps at most ${MAX_NOTES} notes`);
    applyOutItems(job.data.parameters, outValues, job.data.zone);
    if (description !== undefined) job.description = description;
    job.data.notes.push(...notes);
    return status;
  }
}
