import type { Engine } from '../engine/engine.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import { requireType } from '../model/registry.ts';
import { renderObject } from '../model/render.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { parseJobId } from './jobs.ts';

/**
 * What operator messages, user messages and alerts share: objects with a numeric id, read with View and answered
 * with Reply on their partition; a caller who cannot view one gets 404, as for one that does not exist.
 */
export type MessageKind = 'OperatorMessage' | 'UserMessage' | 'Alert';

export async function readMessage(
  store: Store,
  p: Principal,
  kind: MessageKind,
  idText: string,
): Promise<Record<string, unknown>> {
  const id = parseJobId(idText, kind);
  const m = await store.getObject(kind, String(id));
  if (!m || !can(p, kind, m.partition, 'View')) throw notFound(kind, id);
  return renderObject(requireType(kind), { uniqueId: m.uniqueId, businessKey: `${kind}:${id}` }, m.data);
}

/** The id of a message the caller may reply to: 404 when it cannot see it, 403 without the Reply privilege. */
export async function visibleForReply(store: Store, p: Principal, kind: MessageKind, idText: string): Promise<number> {
  const id = parseJobId(idText, kind);
  const m = await store.getObject(kind, String(id));
  if (!m || !can(p, kind, m.partition, 'View')) throw notFound(kind, id);
  if (!can(p, kind, m.partition, 'Reply')) throw forbidden(`You need the Reply privilege to reply to ${kind}:${id}`);
  return id;
}

/** A reply body: an object holding only `fields`, `required` among them. */
export function replyBody(body: unknown, fields: readonly string[], required: string): Record<string, unknown> {
  const shape = `{${fields.map((f) => `"${f}": "…"`).join(', ')}}`;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid(`The body must be ${shape}`);
  for (const k of Object.keys(body))
    if (!fields.includes(k)) throw invalid(`Unknown field "${k}"; the body is ${shape}`);
  const b = body as Record<string, unknown>;
  if (b[required] === undefined) throw invalid(`Field "${required}" is required`);
  return b;
}

/** A service for one kind of message: read one, and reply to it as the kind's body says. */
export abstract class MessageService {
  protected readonly engine: Engine;
  protected readonly clock: Clock;
  protected abstract readonly kind: MessageKind;

  constructor(engine: Engine, clock: Clock) {
    this.engine = engine;
    this.clock = clock;
  }

  get(p: Principal, idText: string): Promise<Record<string, unknown>> {
    return readMessage(this.engine.store, p, this.kind, idText);
  }

  abstract reply(p: Principal, idText: string, body: unknown): Promise<Record<string, unknown>>;
}
