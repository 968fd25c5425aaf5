import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How long a wait for a status or an event may take before the test fails: only a hang should fail it, never a
 * loaded 2-core machine (docs/architecture.md §11). A test proves timing on the virtual clock or from a job's
 * history, not with a short bound here.
 */
export const HANG_MS = 60_000;

/** Polls `probe` until it returns something other than undefined, or fails after `timeoutMs` (a hang). */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = HANG_MS,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(everyMs);
  }
}

const FINAL = new Set(['Completed', 'Error', 'Killed', 'Canceled', 'Unknown', 'Ignored', 'Skipped', 'Never']);

/** A client's GET /Job/<id>, polled until the job has one of `statuses` (default: any final status). */
export function waitForJob(
  get: (path: string) => Promise<{ status: number; json: { Status?: string } }>,
  jobId: number,
  statuses?: readonly string[],
  timeoutMs = HANG_MS,
  // biome-ignore lint/suspicious/noExplicitAny: tests read job fields as a client does
): Promise<any> {
  return waitFor(
    `Job:${jobId} to reach ${statuses?.join('/') ?? 'a final status'}`,
    async () => {
      const r = await get(`/Job/${jobId}`);
      const s = r.json?.Status;
      if (r.status === 200 && s !== undefined && (statuses ? statuses.includes(s) : FINAL.has(s))) return r.json;
      return undefined;
    },
    timeoutMs,
  );
}

/** A promise and the function that fulfils it: steps of a test and of the transaction or request it holds open. */
export function signal(): { done: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const done = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { done, fire };
}
