import assert from 'node:assert/strict';
import type { Response, TestServer } from './server.ts';

/** Client-side helpers for events, as a client would call them. */

// biome-ignore lint/suspicious/noExplicitAny: tests read event fields directly, as a client would
export type EventJson = any;

const options = (body: unknown, key: string | undefined) => ({
  ...(body !== undefined ? { body } : {}),
  ...(key ? { key } : {}),
});

/** POST /EventDefinition/<key> with `body`; asserts 201. */
export async function createDefinition(t: TestServer, key: string, body: Record<string, unknown> = {}): Promise<void> {
  const res = await t.req('POST', `/EventDefinition/${key}`, { body });
  assert.equal(res.status, 201, `create EventDefinition:${key}: ${res.body}`);
}

/** POST /Event/<definition>: raises an event. */
export function raiseRequest(t: TestServer, definition: string, body?: unknown, key?: string): Promise<Response> {
  return t.req('POST', `/Event/${definition}`, options(body, key));
}

/** Raises an event; asserts 201 and returns it. */
export async function raise(t: TestServer, definition: string, body?: unknown, key?: string): Promise<EventJson> {
  const res = await raiseRequest(t, definition, body, key);
  assert.equal(res.status, 201, `raise ${definition}: ${res.body}`);
  return res.json;
}

/** POST /EventDefinition/<definition>/<action> with action clear or clearAllPending. */
export function clearDefinition(
  t: TestServer,
  definition: string,
  action: 'clear' | 'clearAllPending',
  body?: unknown,
  key?: string,
): Promise<Response> {
  return t.req('POST', `/EventDefinition/${definition}/${action}`, options(body, key));
}

/** POST /Event/<event_id>/clear. */
export function clearById(t: TestServer, eventId: string, body?: unknown, key?: string): Promise<Response> {
  return t.req('POST', `/Event/${eventId}/clear`, options(body, key));
}

/** GET /Event/<event_id>; asserts 200 and returns the event. */
export async function getEvent(t: TestServer, eventId: string): Promise<EventJson> {
  const res = await t.req('GET', `/Event/${eventId}`);
  assert.equal(res.status, 200, `GET /Event/${eventId}: ${res.body}`);
  return res.json;
}

/** The Status of each event, by id, as GET answers them. */
export async function statuses(t: TestServer, eventIds: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const id of eventIds) out[id] = (await getEvent(t, id)).Status;
  return out;
}
