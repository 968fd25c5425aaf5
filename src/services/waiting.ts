import type { JobRecord } from '../domain/job.ts';
import type { WaitReason } from '../domain/wait-reasons.ts';
import type { Engine } from '../engine/engine.ts';
import { invalid } from '../errors.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import type { JobService } from './jobs.ts';
import { isPlainObject } from '../domain/json.ts';

export interface WaitingServiceDeps {
  store: Store;
  engine: Engine;
  jobs: JobService;
}

/** At most this many jobs in one batch question (the dashboard's job list shows a page of at most 100). */
export const MAX_WAITING_BATCH = 200;

export interface WaitingAnswer {
  Status: string;
  Reasons: Array<{ Code: string; Message: string; Object: string | null; Until: string | null }>;
}

/**
 * `GET …/Job/<id>/waiting` and `GET …/waiting?Jobs=…`: why jobs wait, as the engine's own checks say
 * (docs/architecture.md §8), for the jobs the caller may view (the privileges of GET /Job/<id>: 404 without View on
 * the job, 403 without View on its definition, queue or process server).
 */
export class WaitingService {
  private readonly deps: WaitingServiceDeps;

  constructor(deps: WaitingServiceDeps) {
    this.deps = deps;
  }

  async one(principal: Principal, idText: string): Promise<WaitingAnswer> {
    const job = await this.deps.jobs.find(principal, idText);
    this.deps.jobs.requireReferencesVisible(principal, job);
    return answer(job, await this.deps.engine.waits().reasons(job, dateIn(job)));
  }

  /** The jobs of `Jobs` (comma-separated ids) the caller may view, each with its reasons; one look at the state. */
  async many(principal: Principal, query: unknown): Promise<{ items: Array<{ Job: number } & WaitingAnswer> }> {
    const ids = parseJobIds(query);
    const jobs = (await this.deps.store.jobs.getMany(ids)).filter((j) => this.mayView(principal, j));
    const byId = new Map(jobs.map((j) => [j.jobId, j]));
    const waits = this.deps.engine.waits();
    const items: Array<{ Job: number } & WaitingAnswer> = [];
    for (const id of ids) {
      const job = byId.get(id);
      if (job) items.push({ Job: job.jobId, ...answer(job, await waits.reasons(job, dateIn(job))) });
    }
    return { items };
  }

  /** What `one` would answer rather than refuse (404 or 403): such jobs are left out of a batch. */
  private mayView(principal: Principal, job: JobRecord): boolean {
    if (!can(principal, 'Job', job.partition, 'View')) return false;
    try {
      this.deps.jobs.requireReferencesVisible(principal, job);
      return true;
    } catch {
      return false;
    }
  }
}

const dateIn = (job: JobRecord) => (ms: number) => formatInstant(ms, job.data.zone);

function answer(job: JobRecord, reasons: readonly WaitReason[]): WaitingAnswer {
  const date = dateIn(job);
  return {
    Status: job.status,
    Reasons: reasons.map((r) => ({
      Code: r.code,
      Message: `${r.message}.`,
      Object: r.object,
      Until: r.until === null ? null : date(r.until),
    })),
  };
}

/** `Jobs`: 1 to 200 job ids, comma-separated, in the order given (repeats once). 400 naming the field otherwise. */
export function parseJobIds(query: unknown): number[] {
  const raw = isPlainObject(query) ? query.Jobs : undefined;
  if (typeof raw !== 'string' || raw.trim() === '')
    throw invalid('Parameter "Jobs": give the job ids, comma-separated (e.g. Jobs=12,13)');
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length > MAX_WAITING_BATCH) throw invalid(`Parameter "Jobs": at most ${MAX_WAITING_BATCH} job ids`);
  const ids: number[] = [];
  for (const part of parts) {
    if (!/^[1-9][0-9]{0,15}$/.test(part) || !Number.isSafeInteger(Number(part)))
      throw invalid(`Parameter "Jobs": "${part.slice(0, 40)}" is not a job id`);
    ids.push(Number(part));
  }
  return [...new Set(ids)];
}
