import { FINAL } from '../domain/job-status.ts';
import { isRunStatus, type RunContribution, type RunStatus, type RuntimeAggregate } from '../domain/runtime-figures.ts';
import type { StatusChange } from './job-store.ts';

/**
 * Runtime statistics per definition and chain step (migration 0014, docs/architecture.md §8b): added to in the
 * transaction that makes a job final, read by key. No read here depends on how many runs there were, except the
 * newest runs, which are read from the jobs still in history through index jobs_definition.
 */

/** The totals of one definition's own jobs (`step` '') or of one of its chain steps, and their P50 and P95. */
export interface RuntimeStats {
  step: string;
  aggregate: RuntimeAggregate;
  /** Nearest-rank percentiles of the durations (ms), within QUANTILE_PRECISION; undefined without runs. */
  p50Ms: number | undefined;
  p95Ms: number | undefined;
}

/** A finished run still in history. */
export interface FinishedRun {
  jobId: number;
  status: RunStatus;
  runStart: number;
  runEnd: number;
  /** A step job's step name; '' for the definition's own jobs. */
  step: string;
}

export interface RuntimeStatsStore {
  /** Adds finished runs to their definitions' rows (an atomic upsert per row, in a fixed order). */
  record(runs: readonly RunContribution[]): Promise<void>;
  /**
   * Every row of these definitions (their own jobs and their chain steps), by definition, with P50 and P95 found
   * in the database (its rows never come to the server: two buckets do).
   */
  read(definitions: readonly string[]): Promise<Map<string, RuntimeStats[]>>;
  /** The newest finished runs of the definition's own jobs (a chain's: the chain jobs), newest first. */
  lastRuns(definition: string, limit: number): Promise<FinishedRun[]>;
  /** The newest finished step jobs of a chain definition, newest first, at most `limit` read. */
  lastStepRuns(definition: string, limit: number): Promise<FinishedRun[]>;
  /** Forgets a definition's statistics (it was deleted). */
  drop(definition: string): Promise<void>;
}

/**
 * The runs a transaction's status changes finished: a job that started and moved from a status that is not final
 * to Completed, Error, Killed or Unknown (a job ending in ConsoleRestart counts when the operator's reply ends it).
 * A chain's step job counts for its step, under the chain's definition.
 */
export function finishedRuns(changes: readonly StatusChange[]): RunContribution[] {
  const runs: RunContribution[] = [];
  for (const { job, from, to } of changes) {
    if (!isRunStatus(to) || (from !== null && FINAL.includes(from))) continue;
    if (job.runStart === null || job.runEnd === null) continue;
    const step = job.data.spec.type === 'JobChainStep' ? stepName(job.data.chain?.step) : '';
    runs.push({ definition: job.definition, step, status: to, ms: job.runEnd - job.runStart });
  }
  return runs;
}

/** A step job's step: its name (kept since runtime statistics), else its place. */
export const stepName = (step: { index: number; name?: string } | undefined): string =>
  step?.name ?? `Step ${(step?.index ?? 0) + 1}`;
