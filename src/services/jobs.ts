import type { JobFileRecord, JobRecord, JobSpec } from '../domain/job.ts';
import { buildJobParameters, type DefinitionParameter } from '../domain/parameters.ts';
import { newEffects } from '../engine/effects.ts';
import type { Engine } from '../engine/engine.ts';
import { insertJob, pendingStatus } from '../engine/transitions.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import type { Privilege } from '../model/fields.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import { isPlainObject } from '../model/validate.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { DateParseError, parseDate, type ZonedInstant } from '../time/date-format.ts';
import { renderJob } from './job-render.ts';

export interface JobServiceDeps {
  store: Store;
  clock: Clock;
  engine: Engine;
  defaultTimeZone: string;
}

const SUBMIT_FIELDS = new Set([
  'JobParameters',
  'RequestedStartTime',
  'Queue',
  'Priority',
  'Description',
  'HoldOnSubmit',
  'SubmitFrame',
]);

/** A job id from a path: a positive integer, else 404 exactly as for a missing job. */
export function parseJobId(text: string, type = 'Job'): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) throw notFound(type, text);
  return Number(text);
}

/** The properties a submit or resubmit body may set (DESIGN §12), checked before anything is stored. */
export interface SubmitOptions {
  parameters: unknown;
  requestedStart: ZonedInstant | undefined;
  queue: string | undefined;
  priority: number | undefined;
  description: string | null | undefined;
  holdOnSubmit: boolean | undefined;
}

export function parseSubmitBody(body: unknown, defaultZone: string): SubmitOptions {
  if (body === undefined || body === null) body = {};
  if (!isPlainObject(body)) throw invalid('The body must be a JSON object');
  for (const k of Object.keys(body)) if (!SUBMIT_FIELDS.has(k)) throw invalid(`Unknown field "${k}"`);
  const b = body;
  let requestedStart: ZonedInstant | undefined;
  if (b.RequestedStartTime !== undefined && b.RequestedStartTime !== null) {
    if (typeof b.RequestedStartTime !== 'string') throw invalid('Field "RequestedStartTime" must be a date string');
    try {
      requestedStart = parseDate(b.RequestedStartTime, defaultZone);
    } catch (e) {
      if (e instanceof DateParseError) throw invalid(`Field "RequestedStartTime": ${e.message}`);
      throw e;
    }
  }
  if (b.Queue !== undefined && b.Queue !== null && typeof b.Queue !== 'string')
    throw invalid('Field "Queue" must be a queue key');
  const p = b.Priority;
  if (p !== undefined && p !== null && (!Number.isInteger(p) || (p as number) < 1 || (p as number) > 100))
    throw invalid('Field "Priority" must be a whole number from 1 to 100');
  if (
    b.Description !== undefined &&
    b.Description !== null &&
    (typeof b.Description !== 'string' || b.Description.length > 255)
  )
    throw invalid('Field "Description" must be text of at most 255 characters');
  if (b.HoldOnSubmit !== undefined && b.HoldOnSubmit !== null && typeof b.HoldOnSubmit !== 'boolean')
    throw invalid('Field "HoldOnSubmit" must be true or false');
  if (b.SubmitFrame !== undefined && b.SubmitFrame !== null)
    throw invalid('Field "SubmitFrame": recurrences are not available in this version of Millrace');
  return {
    parameters: b.JobParameters,
    requestedStart,
    queue: (b.Queue as string | null | undefined) ?? undefined,
    priority: (p as number | null | undefined) ?? undefined,
    description: b.Description as string | null | undefined,
    holdOnSubmit: (b.HoldOnSubmit as boolean | null | undefined) ?? undefined,
  };
}

/** What a job keeps of its definition (see JobSpec). */
export function specOf(definition: StoredObject): JobSpec {
  const d = definition.data;
  return {
    type: d.JobDefinitionType as string,
    script: (d.Script as string | null) ?? null,
    completionStrategy: (d.CompletionStrategy as JobSpec['completionStrategy']) ?? 'Default',
    returnCodeMap: (d.ReturncodeMapToCompleted as string | null) ?? '0',
    restart: (d.RestartBehaviour as Record<string, string> | null) ?? {},
    maxStarts: (d.MaxStarts as number | null) ?? null,
    keepJobs: (d.KeepJobs as number | null) ?? null,
  };
}

/**
 * Submitting, reading and deleting jobs, and reading job files. Privileges: the Job type in the partition of its
 * definition (View to read, Control to act, Delete to delete), Submit on the definition to submit.
 */
export class JobService {
  private readonly d: JobServiceDeps;

  constructor(deps: JobServiceDeps) {
    this.d = deps;
  }

  async submit(p: Principal, definitionKey: string, body: unknown): Promise<Record<string, unknown>> {
    const parsed = parseKey('partitioned', definitionKey);
    if (!parsed || !can(p, 'JobDefinition', parsed.partition, 'View'))
      throw notFound('JobDefinition', parsed?.key ?? definitionKey);
    if (!can(p, 'JobDefinition', parsed.partition, 'Submit'))
      throw forbidden(`You need the Submit privilege to submit ${businessKey('JobDefinition', parsed.key)}`);
    const options = parseSubmitBody(body, this.d.defaultTimeZone);
    const fx = newEffects();
    const job = await this.d.store.transaction(async (tx) => {
      const definition = await tx.getObject('JobDefinition', parsed.key);
      if (!definition) throw notFound('JobDefinition', parsed.key);
      return this.createFrom(tx, p, definition, options, fx);
    });
    this.d.engine.apply(fx);
    return renderJob(job, []);
  }

  /** A new job of `definition` with `options` applied; shared by submit and resubmit. */
  async createFrom(
    tx: Store,
    p: Principal,
    definition: StoredObject,
    options: SubmitOptions,
    fx: ReturnType<typeof newEffects>,
    parameters?: JobRecord['data']['parameters'],
  ): Promise<JobRecord> {
    const d = definition.data;
    const queueKey = parseKey('partitioned', options.queue ?? (d.DefaultQueue as string));
    if (!queueKey) throw invalid(`Field "Queue": "${options.queue}" is not a queue key`);
    const queue = can(p, 'Queue', queueKey.partition, 'View') ? await tx.getObject('Queue', queueKey.key) : undefined;
    if (!queue) throw invalid(`Field "Queue": ${businessKey('Queue', queueKey.key)} does not exist`);
    this.require(p, 'Queue', queueKey.partition, 'Submit', `submit into ${businessKey('Queue', queueKey.key)}`);
    const now = this.d.clock.now();
    const zone = options.requestedStart?.zone ?? (d.TimeZone as string | null) ?? this.d.defaultTimeZone;
    const params =
      parameters ??
      buildJobParameters(
        (d.Parameters as DefinitionParameter[] | null) ?? [],
        options.parameters,
        definition.key,
        zone,
      );
    const start = options.requestedStart?.ms ?? now;
    const hold = options.holdOnSubmit ?? d.HoldOnSubmit === true;
    return insertJob(
      tx,
      {
        definition: definition.key,
        partition: definition.partition,
        status: hold ? 'Held' : pendingStatus(start, now, queue.data.Held === true),
        priority: options.priority ?? (d.Priority as number | null) ?? 50,
        queue: queue.key,
        processServer: null,
        requestedStart: start,
        scheduledStart: null,
        runStart: null,
        runEnd: null,
        returnCode: null,
        parentJob: null,
        jobGroup: null,
        topStart: start,
        attempt: 0,
        starts: 0,
        submittedBy: p.user,
        description: options.description ?? null,
        data: { zone, parameters: params, notes: [], spec: specOf(definition) },
        creationTime: now,
        modificationTime: now,
      },
      fx,
    );
  }

  async get(p: Principal, idText: string): Promise<Record<string, unknown>> {
    const job = await this.find(p, idText);
    for (const [type, key] of [
      ['JobDefinition', job.definition],
      ['Queue', job.queue],
      ['ProcessServer', job.processServer],
    ] as const) {
      const partition = key === null ? undefined : parseKey('partitioned', key)?.partition;
      if (partition !== undefined && !can(p, type, partition, 'View'))
        throw forbidden(`You need the View privilege on the referenced object ${businessKey(type, key as string)}`);
    }
    return renderJob(job, await this.filesWithLiveSizes(job));
  }

  /** A job the caller may see, else 404 exactly as for a missing one. */
  async find(p: Principal, idText: string): Promise<JobRecord> {
    const id = parseJobId(idText);
    const job = await this.d.store.jobs.get(id);
    if (!job || !can(p, 'Job', job.partition, 'View')) throw notFound('Job', id);
    return job;
  }

  require(p: Principal, type: string, partition: string, privilege: Privilege, what: string): void {
    if (!can(p, type, partition, privilege)) throw forbidden(`You need the ${privilege} privilege to ${what}`);
  }

  /** A running job's output grows: its sizes come from the disk until the job reports its final sizes. */
  private async filesWithLiveSizes(job: JobRecord): Promise<JobFileRecord[]> {
    const files = await this.d.store.jobs.listFiles(job.jobId);
    if (job.runEnd !== null) return files;
    return Promise.all(
      files.map(async (f) => ({ ...f, size: Math.max(f.size, await this.d.engine.files.size(job.jobId, f.name)) })),
    );
  }

  openFile(file: JobFileRecord, start: number, end: number) {
    return this.d.engine.files.read(file.jobId, file.name, start, end);
  }

  /** The file and its current size, for GET /JobFile/<uniqueId>/content. */
  async file(p: Principal, idText: string): Promise<{ file: JobFileRecord; size: number }> {
    const id = parseJobId(idText, 'JobFile');
    const file = await this.d.store.jobs.getFile(id);
    const job = file ? await this.d.store.jobs.get(file.jobId) : undefined;
    if (!file || !job || !can(p, 'JobFile', job.partition, 'View') || !can(p, 'Job', job.partition, 'View'))
      throw notFound('JobFile', id);
    return { file, size: await this.d.engine.files.size(file.jobId, file.name) };
  }
}
