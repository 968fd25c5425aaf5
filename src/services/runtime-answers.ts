import type { JobRecord } from '../domain/job.ts';
import type { PathStep } from '../domain/critical-path.ts';
import type { RuntimeAggregate } from '../domain/runtime-figures.ts';
import { invalid } from '../errors.ts';
import { parseKey } from '../model/keys.ts';
import { requireType } from '../model/registry.ts';
import type { Principal } from '../security/privileges.ts';
import type { FinishedRun, RuntimeStats } from '../store/runtime-stats-store.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import type { EstimateBasis, JobEstimates } from './job-estimates.ts';
import type { JobService } from './jobs.ts';
import type { ObjectService } from './objects.ts';
import { isPlainObject } from '../domain/json.ts';

/** At most this many runs in LastRuns, newest first. */
export const LAST_RUNS = 100;
/** A chain's step jobs read for the LastRuns of its steps: this many per step, at most MAX_STEP_SCAN in all. */
const MAX_STEP_SCAN = 2000;

export interface LastRun {
  Job: number;
  Status: string;
  RunStart: string;
  Seconds: number;
}

export interface StatisticsFigures {
  Runs: number;
  Completed: number;
  Error: number;
  Killed: number;
  Unknown: number;
  MeanSeconds: number | null;
  P50Seconds: number | null;
  P95Seconds: number | null;
  MaxSeconds: number | null;
  LastRuns: LastRun[];
}

export interface StatisticsAnswer extends StatisticsFigures {
  /** A chain definition's steps, in the order of its JobChain; absent for another definition. */
  Steps?: Array<{ Step: string } & StatisticsFigures>;
}

export interface EstimateAnswer {
  EstimatedStart: string | null;
  EstimatedEnd: string | null;
  Basis: string;
  Progress: number | null;
  /** A chain job's steps left on its critical path; absent for another job. */
  CriticalPath?: Array<{
    Step: string;
    StepJob: number | null;
    Call: number | null;
    Job: number | null;
    JobDefinition: string | null;
    EstimatedEnd: string;
  }>;
}

/**
 * `GET …/JobDefinition/<key>/statistics` and `GET …/Job/<id>/estimate` (docs/architecture.md §8b): the privileges
 * of GET on the definition or the job, the figures in seconds, dates as the interface writes them (a definition's
 * runs in the server's zone, a job's estimate in the job's zone).
 */
export class RuntimeAnswers {
  private readonly d: {
    store: Store;
    objects: ObjectService;
    jobs: JobService;
    estimates: JobEstimates;
    defaultTimeZone: string;
  };

  constructor(deps: RuntimeAnswers['d']) {
    this.d = deps;
  }

  async statistics(p: Principal, pathKey: string): Promise<StatisticsAnswer> {
    const type = requireType('JobDefinition');
    // Read as GET reads it: 404 unless the caller may view it, 403 naming a referenced object it may not view.
    const definition: Record<string, unknown> = JSON.parse(await this.d.objects.getText(p, type, pathKey));
    const key = parseKey(type.key, pathKey)?.key ?? pathKey;
    const stats = (await this.d.store.runtimeStats.read([key])).get(key) ?? [];
    const own = this.figures(
      stats.find((s) => s.step === ''),
      await this.d.store.runtimeStats.lastRuns(key, LAST_RUNS),
    );
    if (definition.JobDefinitionType !== 'JobChain') return own;
    const chain = await this.d.store.getObject('JobChain', key);
    const names = (chain?.data.Steps ?? []).map((s) => s.Name);
    const scan = Math.min(MAX_STEP_SCAN, LAST_RUNS * names.length);
    const stepRuns = names.length === 0 ? [] : await this.d.store.runtimeStats.lastStepRuns(key, scan);
    return {
      ...own,
      Steps: names.map((name) => ({
        Step: name,
        ...this.figures(
          stats.find((s) => s.step === name),
          stepRuns.filter((r) => r.step === name).slice(0, LAST_RUNS),
        ),
      })),
    };
  }

  private figures(stats: RuntimeStats | undefined, runs: readonly FinishedRun[]): StatisticsFigures {
    const a: RuntimeAggregate = stats?.aggregate ?? {
      runs: 0,
      completed: 0,
      error: 0,
      killed: 0,
      unknown: 0,
      totalMs: 0,
      maxMs: 0,
    };
    const some = a.runs > 0;
    return {
      Runs: a.runs,
      Completed: a.completed,
      Error: a.error,
      Killed: a.killed,
      Unknown: a.unknown,
      MeanSeconds: some ? seconds(a.totalMs / a.runs) : null,
      P50Seconds: some ? seconds(stats?.p50Ms ?? 0) : null,
      P95Seconds: some ? seconds(stats?.p95Ms ?? 0) : null,
      MaxSeconds: some ? seconds(a.maxMs) : null,
      LastRuns: runs.map((r) => ({
        Job: r.jobId,
        Status: r.status,
        RunStart: formatInstant(r.runStart, this.d.defaultTimeZone),
        Seconds: seconds(r.runEnd - r.runStart),
      })),
    };
  }

  async estimate(p: Principal, idText: string, query: unknown): Promise<EstimateAnswer> {
    const job = await this.d.jobs.find(p, idText);
    this.d.jobs.requireReferencesVisible(p, job);
    const basis = parseBasis(query);
    const e = await this.d.estimates.of(job, basis);
    const date = dateIn(job);
    return {
      EstimatedStart: e.EstimatedStart === null ? null : date(e.EstimatedStart),
      EstimatedEnd: e.EstimatedEnd === null ? null : date(e.EstimatedEnd),
      Basis: e.Basis,
      Progress: e.Progress === null ? null : Math.round(e.Progress * 1000) / 1000,
      ...(e.CriticalPath ? { CriticalPath: e.CriticalPath.map((s) => pathStep(s, date)) } : {}),
    };
  }
}

const seconds = (ms: number) => Math.round(ms) / 1000;

const dateIn = (job: JobRecord) => (ms: number) => formatInstant(ms, job.data.zone);

const pathStep = (s: PathStep, date: (ms: number) => string) => ({
  Step: s.step,
  StepJob: s.stepJob,
  Call: s.call,
  Job: s.callJob,
  JobDefinition: s.definition,
  EstimatedEnd: date(s.end),
});

/** `Basis`: P50 (the default) or P95; anything else is 400 naming the parameter. */
export function parseBasis(query: unknown): EstimateBasis {
  const raw = isPlainObject(query) ? query.Basis : undefined;
  if (raw === undefined) return 'P50';
  if (raw === 'P50' || raw === 'P95') return raw;
  throw invalid(`Parameter "Basis": "${String(raw).slice(0, 40)}" is not P50 or P95`);
}
