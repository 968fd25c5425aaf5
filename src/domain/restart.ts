import type { JobStatus } from './job-status.ts';

/**
 * What happens after a job reaches a handled final status. `Restart`, `RestartFromError` and
 * `RestartNoResubmit` make a new job while MaxStarts allows: MaxStarts 3 gives 4 runs in all; only automatic
 * restarts count. `RequestRestart` asks an operator first.
 */
export type RestartDecision = 'none' | 'restart' | 'request';

export function decideRestart(
  status: JobStatus,
  behaviour: Record<string, string>,
  starts: number,
  maxStarts: number | null,
): RestartDecision {
  const action = behaviour[status] ?? 'Continue';
  if (action === 'RequestRestart') return 'request';
  if (action !== 'Restart' && action !== 'RestartFromError' && action !== 'RestartNoResubmit') return 'none';
  if (maxStarts !== null && starts >= maxStarts) return 'none';
  return 'restart';
}
