import type { JobFileRecord, JobRecord } from '../domain/job.ts';
import { buildJobParameters } from '../domain/parameters.ts';
import type { Engine } from '../engine/engine.ts';
import type { Effects, Kernel } from '../engine/kernel.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import { fieldDefault } from '../model/data.ts';
import { declaredParameters } from '../model/definition-parameters.ts';
import type { Privilege } from '../model/fields.ts';
import { businessKey, type ParsedKey, parseKey } from '../model/keys.ts';
import { can, type Principal, partitionsWith } from '../security/privileges.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { formatInstant } from '../time/date-format.ts';
import { parseSubmitBody, type SubmitOptions } from './job-bodies.ts';
import { JOB_LIST_PARAMS, parseJobFilter } from './job-list.ts';
import { renderJob, selectFields } from './job-render.ts';
import { encodeCursor, type ListAnswer, partitionsToRead, readPage, readParams } from './list-query.ts';
import { userCause } from './user-cause.ts';

export interface JobServiceDeps {
  store: Store;
  clock: Clock;
  engine: Engine;
  defaultTimeZone: string;
}

/** A job changes status a few dozen times at most; hold/release loops are capped here. */
const MAX_HISTORY = 10_000;

/** A job id from a path: a positive integer, else 404 exactly as for a missing job. */
export function parseJobId(text: string, type = 'Job'): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) throw notFound(type, text);
  return Number(text);
}

/**
 * Submitting, reading and deleting jobs, and reading job files. Privileges: the Job type in the partition of its
 * definition (View to read, Control to act, Delete to delete), Submit on the definition to submit.
 */
export class JobService {
  private readonly deps: JobServiceDeps;

  constructor(deps: JobServiceDeps) {
    this.deps = deps;
  }

  /**
   * The checks of a submit that need no body (docs/architecture.md §10): View on the definition's partition (else
   * 404), Submit (else 403). The JSON interface runs them before it reads the body, and `submit` again.
   */
  authorizeSubmit(principal: Principal, definitionKey: string): ParsedKey {
    const parsed = parseKey('partitioned', definitionKey);
    if (!parsed || !can(principal, 'JobDefinition', parsed.partition, 'View'))
      throw notFound('JobDefinition', parsed?.key ?? definitionKey);
    if (!can(principal, 'JobDefinition', parsed.partition, 'Submit'))
      throw forbidden(`You need the Submit privilege to submit ${businessKey('JobDefinition', parsed.key)}`);
    return parsed;
  }

  async submit(principal: Principal, definitionKey: string, body: unknown): Promise<Record<string, unknown>> {
    const parsed = this.authorizeSubmit(principal, definitionKey);
    const options = parseSubmitBody(body, this.deps.defaultTimeZone);
    const job = await this.deps.engine.submit(
      async (tx, effects, kernel) => {
        const definition = await tx.getObject('JobDefinition', parsed.key);
        if (!definition) throw notFound('JobDefinition', parsed.key);
        return this.createFrom(tx, kernel, principal, definition, options, effects);
      },
      userCause(principal, 'submit'),
    );
    return renderJob(job, []);
  }

  /** A new job of `definition` with `options` applied; shared by submit and resubmit. */
  async createFrom(
    tx: Store,
    kernel: Kernel,
    principal: Principal,
    definition: StoredObject<'JobDefinition'>,
    options: SubmitOptions,
    effects: Effects,
    parameters?: JobRecord['data']['parameters'],
  ): Promise<JobRecord> {
    const d = definition.data;
    const queue = await this.queue(
      tx,
      principal,
      options.queue ?? d.DefaultQueue ?? fieldDefault('JobDefinition', 'DefaultQueue'),
    );
    const now = this.deps.clock.now();
    const zone = options.requestedStart?.zone ?? d.TimeZone ?? this.deps.defaultTimeZone;
    const params = parameters ?? buildJobParameters(declaredParameters(d), options.parameters, definition.key, zone);
    let frame: string | undefined;
    if (options.submitFrame !== undefined) {
      const frameKey = parseKey('partitioned', options.submitFrame);
      if (!frameKey || !can(principal, 'SubmitFrame', frameKey.partition, 'View'))
        throw invalid(
          `Field "SubmitFrame": ${businessKey('SubmitFrame', frameKey?.key ?? options.submitFrame)} does not exist`,
        );
      frame = frameKey.key;
    }
    return kernel.submit(
      tx,
      {
        definition,
        queue: queue.key,
        priority: options.priority ?? d.Priority ?? fieldDefault('JobDefinition', 'Priority'),
        requestedStart: options.requestedStart?.ms ?? now,
        zone,
        parameters: params,
        hold: options.holdOnSubmit ?? d.HoldOnSubmit === true,
        description: options.description ?? null,
        submittedBy: principal.user,
        ...(frame !== undefined ? { submitFrame: frame } : {}),
        ...(options.maxRunTime !== undefined ? { maxRunTime: options.maxRunTime } : {}),
      },
      now,
      effects,
    );
  }

  async get(principal: Principal, idText: string): Promise<Record<string, unknown>> {
    const job = await this.find(principal, idText);
    this.requireReferencesVisible(principal, job);
    const rendered = renderJob(job, await this.filesWithLiveSizes(job));
    const waiting = await this.unservedNote(job);
    if (waiting) rendered.JobNotes = [...(rendered.JobNotes as string[]), waiting];
    return rendered;
  }

  /**
   * A Queued job whose queue no process server serves waits until a QueueProvider links one: say so when it is
   * read (not stored: it stops being true the moment a provider is added).
   */
  private async unservedNote(job: JobRecord): Promise<string | undefined> {
    if (job.status !== 'Queued') return undefined;
    const queue = await this.deps.store.getObject('Queue', job.queue);
    if (!queue) return undefined;
    if ((await this.deps.store.referrerKeys(queue.uniqueId, 'QueueProvider', 'Queue')).length > 0) return undefined;
    return `Waiting: no process server serves ${businessKey('Queue', job.queue)}; add a QueueProvider linking one to it`;
  }

  /** GET /Job/<id>/history: the job's status changes, oldest first (the privileges of GET /Job/<id>). */
  async history(principal: Principal, idText: string): Promise<{ items: Record<string, unknown>[] }> {
    const job = await this.find(principal, idText);
    const entries = await this.deps.store.jobs.history(job.jobId, MAX_HISTORY);
    return {
      items: entries.map((e) => ({
        Time: formatInstant(e.time, job.data.zone),
        FromStatus: e.from,
        ToStatus: e.to,
        User: e.user,
        Cause: e.cause,
        Detail: e.detail,
      })),
    };
  }

  /**
   * `GET /Job`: the jobs the caller may view (View on Job in their partition, filtered in SQL so pages stay full
   * and nothing tells of hidden jobs), newest first, a page at a time after the cursor; each as `get` renders it.
   */
  async list(principal: Principal, query: unknown): Promise<ListAnswer> {
    const values = readParams(query, JOB_LIST_PARAMS);
    const { partition, ...filter } = parseJobFilter(values, this.deps.defaultTimeZone);
    const page = readPage(values, 'j');
    const partitions = partitionsToRead(partitionsWith(principal, 'Job', ['View']), partition);
    const jobs = await this.deps.store.jobs.listJobs({
      ...filter,
      ...(partitions !== undefined ? { partitions } : {}),
      ...(page.after !== undefined ? { beforeJobId: Number(page.after) } : {}),
      limit: page.limit + 1,
    });
    const shown = jobs.slice(0, page.limit);
    const wantsFiles =
      page.fields === undefined ||
      page.fields.trim() === '' ||
      page.fields.split(',').some((f) => f.trim().toLowerCase() === 'jobfiles');
    const files = wantsFiles ? await this.deps.store.jobs.listFilesOfJobs(shown.map((j) => j.jobId)) : [];
    const filesOf = new Map<number, JobFileRecord[]>();
    for (const f of files) {
      const own = filesOf.get(f.jobId);
      if (own) own.push(f);
      else filesOf.set(f.jobId, [f]);
    }
    const items = await Promise.all(
      shown.map(async (job) =>
        selectFields(renderJob(job, await this.liveSizes(job, filesOf.get(job.jobId) ?? [])), page.fields),
      ),
    );
    const last = shown[shown.length - 1];
    return { items, next: jobs.length > page.limit && last ? encodeCursor('j', last.jobId) : null };
  }

  /** GET /Job/<id> shows the job's definition, queue and process server: 403 unless the caller may view each. */
  requireReferencesVisible(principal: Principal, job: JobRecord): void {
    for (const [type, key] of [
      ['JobDefinition', job.definition],
      ['Queue', job.queue],
      ['ProcessServer', job.processServer],
    ] as const) {
      if (key === null) continue;
      const partition = parseKey('partitioned', key)?.partition;
      if (partition !== undefined && !can(principal, type, partition, 'View'))
        throw forbidden(`You need the View privilege on the referenced object ${businessKey(type, key)}`);
    }
  }

  /** A job the caller may see, else 404 exactly as for a missing one. */
  async find(principal: Principal, idText: string): Promise<JobRecord> {
    const id = parseJobId(idText);
    const job = await this.deps.store.jobs.get(id);
    if (!job || !can(principal, 'Job', job.partition, 'View')) throw notFound('Job', id);
    return job;
  }

  /** The queue a job goes into: it must exist, be visible, and take the caller's submits. */
  async queue(tx: Store, principal: Principal, key: string): Promise<StoredObject<'Queue'>> {
    const queueKey = parseKey('partitioned', key);
    if (!queueKey) throw invalid(`Field "Queue": "${key}" is not a queue key`);
    const queue = can(principal, 'Queue', queueKey.partition, 'View')
      ? await tx.getObject('Queue', queueKey.key)
      : undefined;
    if (!queue) throw invalid(`Field "Queue": ${businessKey('Queue', queueKey.key)} does not exist`);
    this.require(principal, 'Queue', queueKey.partition, 'Submit', `submit into ${businessKey('Queue', queueKey.key)}`);
    return queue;
  }

  require(principal: Principal, type: string, partition: string, privilege: Privilege, what: string): void {
    if (!can(principal, type, partition, privilege)) throw forbidden(`You need the ${privilege} privilege to ${what}`);
  }

  /** A running job's output grows: its sizes come from the disk until the job reports its final sizes. */
  private async filesWithLiveSizes(job: JobRecord): Promise<JobFileRecord[]> {
    return this.liveSizes(job, await this.deps.store.jobs.listFiles(job.jobId));
  }

  private async liveSizes(job: JobRecord, files: JobFileRecord[]): Promise<JobFileRecord[]> {
    if (job.runEnd !== null || files.length === 0) return files;
    return Promise.all(
      files.map(async (f) => ({ ...f, size: Math.max(f.size, await this.deps.engine.files.size(job.jobId, f.name)) })),
    );
  }

  openFile(file: JobFileRecord, start: number, end: number) {
    return this.deps.engine.files.read(file.jobId, file.name, start, end);
  }

  /** The file and its current size, for GET /JobFile/<uniqueId>/content. */
  async file(principal: Principal, idText: string): Promise<{ file: JobFileRecord; size: number }> {
    const id = parseJobId(idText, 'JobFile');
    const file = await this.deps.store.jobs.getFile(id);
    const job = file ? await this.deps.store.jobs.get(file.jobId) : undefined;
    if (
      !file ||
      !job ||
      !can(principal, 'JobFile', job.partition, 'View') ||
      !can(principal, 'Job', job.partition, 'View')
    )
      throw notFound('JobFile', id);
    return { file, size: await this.deps.engine.files.size(file.jobId, file.name) };
  }
}
