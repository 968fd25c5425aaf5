import type { JobStatus } from './job-status.ts';
import { FINAL } from './job-status.ts';

/**
 * When a chain will end, from what is left of it (docs/architecture.md §8b), pure. Steps run one after another and
 * the calls of a step in parallel, so the chain ends when the longest call of each step left has ended, in turn: a
 * finished step counts its real end, a running call its start plus its figure (or now, once past it), a call not
 * started yet the figure from when its step starts (never before now).
 */

/** A call of a step as the estimate sees it: its job (none yet: null) and its definition's figure. */
export interface CallProgress {
  jobId: number | null;
  definition: string;
  status: JobStatus | null;
  runStart: number | null;
  runEnd: number | null;
  /** The duration its definition's statistics give (P50 or P95); undefined without statistics. */
  figureMs: number | undefined;
}

export interface StepProgress {
  name: string;
  jobId: number | null;
  status: JobStatus | null;
  runStart: number | null;
  runEnd: number | null;
  calls: CallProgress[];
}

/** A step left on the critical path: the call expected to end last, and when. */
export interface PathStep {
  step: string;
  stepJob: number | null;
  /** The index of the call in the step's Calls; null for a step without calls. */
  call: number | null;
  callJob: number | null;
  definition: string | null;
  end: number;
}

/** Calls in these statuses will not run: they take no time. */
const NOT_RUN: readonly (JobStatus | null)[] = ['Disabled', 'Ignored', 'Skipped', 'Canceled', 'Never'];

const isFinalStatus = (s: JobStatus | null) => s !== null && FINAL.includes(s);

/**
 * The chain's estimated end and the steps left on its critical path, from `start` (its RunStart, or when it is
 * expected to start) at `now`. Undefined when a call left to run has no figure: then there is no path to tell.
 */
export function criticalPath(
  steps: readonly StepProgress[],
  start: number,
  now: number,
): { end: number; path: PathStep[] } | undefined {
  let t = start;
  const path: PathStep[] = [];
  for (const step of steps) {
    if (isFinalStatus(step.status)) {
      t = step.runEnd ?? t;
      continue;
    }
    const runStart = step.runStart;
    const running = runStart !== null;
    const from = runStart !== null ? Math.max(now, runStart) : Math.max(t, now);
    let end = running ? now : from;
    let longest: { index: number; call: CallProgress; end: number } | undefined;
    for (const [index, call] of step.calls.entries()) {
      const callEnd = endOfCall(call, from, now);
      if (callEnd === undefined) return undefined;
      if (!isFinalStatus(call.status) && !NOT_RUN.includes(call.status) && (!longest || callEnd > longest.end))
        longest = { index, call, end: callEnd };
      end = Math.max(end, callEnd);
    }
    path.push({
      step: step.name,
      stepJob: step.jobId,
      call: longest?.index ?? null,
      callJob: longest?.call.jobId ?? null,
      definition: longest?.call.definition ?? null,
      end,
    });
    t = end;
  }
  return { end: t, path };
}

/** When a call ends: its real end, its start plus its figure (not before now), or the figure from `from`. */
function endOfCall(call: CallProgress, from: number, now: number): number | undefined {
  if (NOT_RUN.includes(call.status)) return call.runEnd ?? from;
  if (isFinalStatus(call.status)) return call.runEnd ?? now;
  if (call.figureMs === undefined) return undefined;
  if (call.runStart !== null) return Math.max(now, call.runStart + call.figureMs);
  return from + call.figureMs;
}
