import { type CallProgress, criticalPath, type PathStep, type StepProgress } from '../domain/critical-path.ts';
import type { ChainStructure, JobRecord } from '../domain/job.ts';
import { ACTIVE, FINAL } from '../domain/job-status.ts';
import type { RuntimeStats } from '../store/runtime-stats-store.ts';
import { stepName } from '../store/runtime-stats-store.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';

/** Which figure of the statistics an estimate is built on. */
export type EstimateBasis = 'P50' | 'P95';

/**
 * When a job is expected to start and end (docs/architecture.md §8b), instants as epoch ms; the interfaces render
 * them as dates. `Basis` `None` (and a null end and progress) when no statistics tell; a final job answers its real
 * start and end with Basis `None`.
 */
export interface JobEstimate {
  EstimatedStart: number | null;
  EstimatedEnd: number | null;
  Basis: EstimateBasis | 'None';
  /** Elapsed ÷ estimated duration of a running job, clamped to 0…1; 1 for a finished job that ran; else null. */
  Progress: number | null;
}

/** An estimate with, for a chain job, the steps left on its critical path (null for any other job). */
export interface DetailedEstimate extends JobEstimate {
  CriticalPath: PathStep[] | null;
}

/**
 * Estimates from the runtime statistics (store/runtime-stats-store.ts), never from a scan of history: a job's own
 * definition (a step job: its step's) gives its figure; a chain job's end is the critical path of what is left of it
 * (domain/critical-path.ts), or its own definition's figure when a call left has no statistics.
 */
export class JobEstimates {
  private readonly store: Store;
  private readonly clock: Clock;

  constructor(deps: { store: Store; clock: Clock }) {
    this.store = deps.store;
    this.clock = deps.clock;
  }

  /** The estimate of job `jobId`; undefined when there is no such job. */
  async estimate(jobId: number, basis: EstimateBasis): Promise<JobEstimate | undefined> {
    const job = await this.store.jobs.get(jobId);
    return job ? this.of(job, basis) : undefined;
  }

  /** The estimate of a job already read, with a chain's critical path. */
  async of(job: JobRecord, basis: EstimateBasis): Promise<DetailedEstimate> {
    const now = this.clock.now();
    // Ended, or ended and waiting for an operator's reply (ConsoleRestart): its real times.
    if (FINAL.includes(job.status) || job.runEnd !== null)
      return {
        EstimatedStart: job.runStart,
        EstimatedEnd: job.runEnd,
        Basis: 'None',
        Progress: job.runStart === null ? null : 1,
        CriticalPath: null,
      };
    const runStart = ACTIVE.includes(job.status) ? job.runStart : null;
    const running = runStart !== null;
    const start = runStart !== null ? runStart : Math.max(now, job.requestedStart);
    if (job.data.chain?.structure) {
      const path = await this.chainPath(job, basis, start, now);
      if (path)
        return {
          EstimatedStart: start,
          EstimatedEnd: path.end,
          Basis: basis,
          Progress: running ? progress(now - start, path.end - start) : null,
          CriticalPath: path.path,
        };
    }
    const step = job.data.spec.type === 'JobChainStep' ? stepName(job.data.chain?.step) : '';
    const stats = (await this.store.runtimeStats.read([job.definition])).get(job.definition);
    const figure = figureOf(
      stats?.find((s) => s.step === step),
      basis,
    );
    if (figure === undefined)
      return { EstimatedStart: start, EstimatedEnd: null, Basis: 'None', Progress: null, CriticalPath: null };
    return {
      EstimatedStart: start,
      EstimatedEnd: running ? Math.max(now, start + figure) : start + figure,
      Basis: basis,
      Progress: running ? progress(now - start, figure) : null,
      CriticalPath: null,
    };
  }

  /** The critical path of what is left of a chain job; undefined when a call left has no statistics. */
  private async chainPath(chain: JobRecord, basis: EstimateBasis, start: number, now: number) {
    const structure: ChainStructure | undefined = await this.store.jobs.chainStructure(chain);
    if (!structure) return undefined;
    const stepJobs = newestBySlot(await this.store.jobs.listChildren(chain.jobId), (j) => j.data.chain?.step?.index);
    const steps: StepProgress[] = [];
    for (const [index, spec] of structure.steps.entries()) {
      const job = stepJobs.get(index);
      // A step's call jobs are made with the step job, before it starts (Chained): named as they will run.
      const callJobs = job
        ? newestBySlot(await this.store.jobs.listChildren(job.jobId), (j) => j.data.chain?.call?.call)
        : new Map<number, JobRecord>();
      steps.push({
        name: spec.Name,
        jobId: job?.jobId ?? null,
        status: job?.status ?? null,
        runStart: job?.runStart ?? null,
        runEnd: job?.runEnd ?? null,
        calls: spec.Calls.map((call, i): CallProgress => {
          const c = callJobs.get(i);
          return {
            jobId: c?.jobId ?? null,
            definition: c?.definition ?? call.JobDefinition,
            status: c?.status ?? (call.SubmitDisabled ? 'Disabled' : null),
            runStart: c?.runStart ?? null,
            runEnd: c?.runEnd ?? null,
            figureMs: undefined,
          };
        }),
      });
    }
    const definitions = [...new Set(steps.flatMap((s) => s.calls.map((c) => c.definition)))];
    const stats = await this.store.runtimeStats.read(definitions);
    for (const s of steps)
      for (const c of s.calls)
        c.figureMs = figureOf(
          stats.get(c.definition)?.find((x) => x.step === ''),
          basis,
        );
    return criticalPath(steps, start, now);
  }
}

/** The figure of one row of statistics; undefined without runs. */
export function figureOf(stats: RuntimeStats | undefined, basis: EstimateBasis): number | undefined {
  if (!stats || stats.aggregate.runs === 0) return undefined;
  return basis === 'P50' ? stats.p50Ms : stats.p95Ms;
}

const progress = (elapsed: number, total: number) => (total <= 0 ? 1 : Math.min(1, Math.max(0, elapsed / total)));

/** The newest job of each slot among `children`. */
function newestBySlot(children: readonly JobRecord[], slot: (j: JobRecord) => number | undefined) {
  const m = new Map<number, JobRecord>();
  for (const c of children) {
    const s = slot(c);
    if (s === undefined) continue;
    const seen = m.get(s);
    if (!seen || c.jobId > seen.jobId) m.set(s, c);
  }
  return m;
}
