import assert from 'node:assert/strict';
import type { Response, TestServer } from './server.ts';
import { HANG_MS } from './wait.ts';

/**
 * Client-side helpers for the Job part of the JSON interface: submit, read, act, and wait for a status by polling
 * GET /Job/<id>, as a client would.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read job fields directly, as a client would
export type JobJson = any;

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A submit body for GLOBAL.System_Sleep waiting `ms` milliseconds, with other submit fields. */
export function sleepBody(ms: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: ms }], ...extra };
}

/** POST /Job/<definition>; asserts 201 and returns the job. */
export async function submit(t: TestServer, definition: string, body?: unknown, key?: string): Promise<JobJson> {
  const res = await t.req('POST', `/Job/${definition}`, {
    ...(body !== undefined ? { body } : {}),
    ...(key ? { key } : {}),
  });
  assert.equal(res.status, 201, `submit ${definition}: ${res.body}`);
  return res.json;
}

/** Submits GLOBAL.System_Sleep for `ms` milliseconds; asserts 201 and returns the job. */
export function submitSleep(t: TestServer, ms: number, extra: Record<string, unknown> = {}): Promise<JobJson> {
  return submit(t, 'GLOBAL.System_Sleep', sleepBody(ms, extra));
}

/** GET /Job/<id>; asserts 200 and returns the job. */
export async function getJob(t: TestServer, jobId: number): Promise<JobJson> {
  const res = await t.req('GET', `/Job/${jobId}`);
  assert.equal(res.status, 200, `GET /Job/${jobId}: ${res.body}`);
  return res.json;
}

/** PUT /Job/<id>/<action> (or PUT /Job/<id> when `action` is empty). */
export function act(t: TestServer, jobId: number, action: string, body?: unknown, key?: string): Promise<Response> {
  const path = action === '' ? `/Job/${jobId}` : `/Job/${jobId}/${action}`;
  return t.req('PUT', path, { ...(body !== undefined ? { body } : {}), ...(key ? { key } : {}) });
}

/** Polls GET /Job/<id> until its Status is one of `statuses`; returns the job. Fails after `timeoutMs`. */
export async function waitForStatus(
  t: TestServer,
  jobId: number,
  statuses: string | readonly string[],
  timeoutMs = HANG_MS,
): Promise<JobJson> {
  const wanted = typeof statuses === 'string' ? [statuses] : statuses;
  const end = Date.now() + timeoutMs;
  let job: JobJson;
  for (;;) {
    job = await getJob(t, jobId);
    if (wanted.includes(job.Status)) return job;
    if (Date.now() > end)
      assert.fail(`Job:${jobId} is ${job.Status} after ${timeoutMs} ms; expected ${wanted.join(' or ')}`);
    await pause(10);
  }
}

/** Asserts that Job:<id> keeps `status` for `ms` milliseconds (it is waiting, not merely slow). */
export async function staysIn(t: TestServer, jobId: number, status: string, ms = 200): Promise<void> {
  const end = Date.now() + ms;
  do {
    assert.equal((await getJob(t, jobId)).Status, status, `Job:${jobId} stays ${status}`);
    await pause(20);
  } while (Date.now() < end);
}

/** Asserts an error record of docs/architecture.md §9: the status, `code` as text, and a message matching `message`. */
/** POSTs an object (or anything answering 201) and fails the test with the answer's body otherwise. */
export async function postCreated(t: TestServer, path: string, body: unknown = {}): Promise<void> {
  const res = await t.req('POST', path, { body });
  assert.equal(res.status, 201, `POST ${path}: ${res.body}`);
}

export function assertError(res: Response, status: number, message: RegExp | string): void {
  assert.equal(res.status, status, res.body);
  assert.equal(res.json?.code, String(status), res.body);
  if (typeof message === 'string') assert.equal(res.json.message, message);
  else assert.match(res.json.message, message);
}

/** Epoch milliseconds of a date as the interface writes it (`YYYY/MM/DD HH:MM:SS,mmm UTC`). */
export function utcMillis(text: string): number {
  const m = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2}),(\d{3}) UTC$/.exec(text);
  assert.ok(m, `a UTC date: ${text}`);
  const [, y, mo, d, h, mi, s, ms] = m.map(Number) as number[];
  return Date.UTC(y as number, (mo as number) - 1, d, h, mi, s, ms);
}

/** Creates a queue served by GLOBAL.System (through a new queue provider), so System_Sleep jobs can use it. */
export async function systemQueue(t: TestServer, queue: string, body: Record<string, unknown> = {}): Promise<void> {
  const q = await t.req('POST', `/Queue/${queue}`, { body });
  assert.equal(q.status, 201, q.body);
  const qp = await t.req('POST', `/QueueProvider/GLOBAL.System.${queue}`, { body: {} });
  assert.equal(qp.status, 201, qp.body);
}
