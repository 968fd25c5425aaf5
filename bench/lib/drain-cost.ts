/**
 * What a feature costs the drain of no-op jobs (B16's runtime statistics, B17's audit trail): fresh `millrace serve`
 * processes with the feature on and off (`offArgs`), repetitions interleaved (every other one in reverse order so
 * neither way always runs second), each draining 500 untimed jobs and then N timed ones. Drain jobs/s = N ÷ (first
 * submit → the 50 ms poll of the jobs table that sees all N Completed), and the server's CPU time per job.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobsReader, submitMany, submitter } from '../agent-harness.ts';
import { processCpuSeconds, type Serve, startServe, stop } from '../harness.ts';
import { fixed, int, median, pct, say } from './report.ts';

export const DRAIN_DEFINITION = 'GLOBAL.System_Sleep';
const BODY = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));
const WARMUP = 500;

/** Drains `warmup` then `jobs` no-op jobs; answers the timed drain's jobs/s and the server's CPU ms per job. */
async function drain(serve: Serve, apiKey: string, jobs: number): Promise<{ rate: number; cpuMs: number }> {
  const http = submitter(serve.base, apiKey, 50);
  const reader = new JobsReader(serve.dataDir);
  try {
    const seen = async (n: number, after: number) => {
      const deadline = Date.now() + 600_000;
      while (reader.completed(after) < n) {
        if (Date.now() > deadline) throw new Error(`${n} jobs not Completed within 600 s`);
        await sleep(50);
      }
    };
    await submitMany(http, DRAIN_DEFINITION, BODY, WARMUP, 50);
    await seen(WARMUP, 0);
    const after = Math.max(0, ...reader.rows(0).map((r) => r.job_id));
    const t0 = performance.now();
    const cpu0 = processCpuSeconds(serve.proc.pid);
    await submitMany(http, DRAIN_DEFINITION, BODY, jobs, 50);
    await seen(jobs, after);
    const rate = jobs / ((performance.now() - t0) / 1000);
    return { rate, cpuMs: ((processCpuSeconds(serve.proc.pid) - cpu0) * 1000) / jobs };
  } finally {
    http.close();
  }
}

/** The figures of both ways: per repetition, their medians, and the cost of the feature. */
export interface DrainCost {
  rates: { on: number[]; off: number[] };
  cpu: { on: number[]; off: number[] };
  /** Median jobs/s with the feature on and off. */
  on: number;
  off: number;
  /** 1 − on ÷ off. */
  cost: number;
  /** Median CPU per job on ÷ off − 1. */
  cpuCost: number;
}

/** Runs the interleaved drains, printing each repetition and the summary; `labels` name the two ways. */
export async function drainCost(args: {
  opts: { pin: boolean; jobs: number; reps: number };
  work: string;
  apiKey: string;
  offArgs: string[];
  labels: { on: string; off: string };
  targetCost: number;
}): Promise<DrainCost> {
  const { opts, labels } = args;
  const rates = { on: [] as number[], off: [] as number[] };
  const cpu = { on: [] as number[], off: [] as number[] };
  const width = Math.max(labels.on.length, labels.off.length);
  for (let rep = 0; rep < opts.reps; rep++) {
    const order: Array<'on' | 'off'> = rep % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const way of order) {
      const serve = await startServe({
        pin: opts.pin,
        dataDir: join(args.work, `drain-${rep}-${way}`),
        apiKey: args.apiKey,
        serveArgs: ['--no-local-agent', ...(way === 'off' ? args.offArgs : [])],
      });
      try {
        const { rate, cpuMs } = await drain(serve, args.apiKey, opts.jobs);
        rates[way].push(rate);
        cpu[way].push(cpuMs);
        say(`rep ${rep + 1} ${labels[way].padEnd(width)}: ${int(rate)} jobs/s, server CPU ${fixed(cpuMs, 3)} ms/job`);
      } finally {
        await stop(serve.proc);
      }
    }
  }
  const on = median(rates.on);
  const off = median(rates.off);
  const cost = 1 - on / off;
  const cpuCost = median(cpu.on) / median(cpu.off) - 1;
  say(
    '',
    `drain of ${int(opts.jobs)} no-op jobs, median of ${opts.reps}: ${labels.on} ${int(on)} jobs/s, ${labels.off} ` +
      `${int(off)} jobs/s: cost ${pct(cost * 100)} (target < ${pct(args.targetCost * 100)})`,
    `server CPU per job, median: ${labels.on} ${fixed(median(cpu.on), 3)} ms, ${labels.off} ` +
      `${fixed(median(cpu.off), 3)} ms: ${pct(cpuCost * 100)} more`,
    '',
  );
  return { rates, cpu, on, off, cost, cpuCost };
}
