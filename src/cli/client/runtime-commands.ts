import type { Command } from 'commander';
import { type ClientFlags, clientCommand, contextOf, type Ctx } from './context.ts';
import { type Json, seg } from './http.ts';
import { type Column, printObject, statusColour, table, useColour, write } from './output.ts';

/** `millrace def stats` and `millrace job estimate`: runtime statistics and estimates (docs/architecture.md §8b). */

const RUN_COLUMNS: Column[] = [
  { header: 'JOB', value: (r) => r.Job },
  { header: 'STATUS', value: (r) => r.Status, colour: (r) => statusColour(r.Status) },
  { header: 'RUNSTART', value: (r) => r.RunStart },
  { header: 'SECONDS', value: (r) => r.Seconds },
];

const FIGURE_COLUMNS: Column[] = [
  { header: 'STEP', value: (s) => s.Step },
  { header: 'RUNS', value: (s) => s.Runs },
  { header: 'MEAN', value: (s) => s.MeanSeconds },
  { header: 'P50', value: (s) => s.P50Seconds },
  { header: 'P95', value: (s) => s.P95Seconds },
  { header: 'MAX', value: (s) => s.MaxSeconds },
];

const PATH_COLUMNS: Column[] = [
  { header: 'STEP', value: (s) => s.Step },
  { header: 'LONGEST CALL', value: (s) => s.JobDefinition },
  { header: 'JOB', value: (s) => s.Job },
  { header: 'ENDS', value: (s) => s.EstimatedEnd },
];

interface StatsFlags extends ClientFlags {
  runs: string;
}

interface EstimateFlags extends ClientFlags {
  p95?: boolean;
}

/** Registers `stats` under `def` and `estimate` under `job` (both made by their own modules). */
export function registerRuntimeCommands(def: Command, job: Command): void {
  clientCommand(def, 'stats', "show a definition's runtime statistics and its newest runs")
    .argument('<definition>', '<partition>.<name>')
    .option('--runs <n>', 'how many of the newest runs to list (at most 100)', '10')
    .action((key: string, flags: StatsFlags) => stats(contextOf(flags), key, flags));
  clientCommand(job, 'estimate', 'say when a job is expected to start and end, from its definition’s statistics')
    .argument('<id>', 'job id')
    .option('--p95', 'estimate with the 95th percentile of the durations instead of the median')
    .action((id: string, flags: EstimateFlags) => estimate(contextOf(flags), id, flags));
}

const secs = (s: unknown) => (typeof s === 'number' ? `${s} s` : '-');

async function stats(ctx: Ctx, key: string, flags: StatsFlags): Promise<void> {
  const runs = Number(flags.runs);
  if (!Number.isInteger(runs) || runs < 0 || runs > 100) throw new Error(`--runs ${flags.runs}: give 0 to 100`);
  const s = await ctx.client.get(`/JobDefinition/${seg(key)}/statistics`);
  if (ctx.format !== 'table') return printObject(s, ctx.format);
  write(
    `${key}: ${s.Runs} runs (Completed ${s.Completed}, Error ${s.Error}, Killed ${s.Killed}, Unknown ${s.Unknown})`,
  );
  write(`mean ${secs(s.MeanSeconds)}  P50 ${secs(s.P50Seconds)}  P95 ${secs(s.P95Seconds)}  max ${secs(s.MaxSeconds)}`);
  const steps: Json[] = s.Steps ?? [];
  if (steps.length > 0) write(table(steps, FIGURE_COLUMNS, useColour()).join('\n'));
  const last: Json[] = (s.LastRuns ?? []).slice(0, runs);
  if (last.length > 0) write(table(last, RUN_COLUMNS, useColour()).join('\n'));
}

async function estimate(ctx: Ctx, id: string, flags: EstimateFlags): Promise<void> {
  const e = await ctx.client.get(`/Job/${seg(id)}/estimate${flags.p95 ? '?Basis=P95' : ''}`);
  if (ctx.format !== 'table') return printObject(e, ctx.format);
  const progress = typeof e.Progress === 'number' ? ` (${Math.round(e.Progress * 100)} % done)` : '';
  if (e.Basis === 'None' && e.EstimatedEnd === null)
    write(
      `Job ${id}: no runs of its definition tell when it ends${e.EstimatedStart ? `; starts ${e.EstimatedStart}` : ''}`,
    );
  else if (e.Basis === 'None') write(`Job ${id} ran from ${e.EstimatedStart ?? '-'} to ${e.EstimatedEnd}`);
  else write(`Job ${id}: starts ${e.EstimatedStart}, ends about ${e.EstimatedEnd} (${e.Basis})${progress}`);
  const path: Json[] = e.CriticalPath ?? [];
  if (path.length > 0) write(table(path, PATH_COLUMNS, useColour()).join('\n'));
}
