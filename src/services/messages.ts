import type { Engine } from '../engine/engine.ts';
import { forbidden, notFound } from '../errors.ts';
import { keyShapeOf, requireForm, requireType } from '../model/registry.ts';
import { validateForm } from '../model/validate.ts';
import { renderObject } from '../model/render.ts';
import { ALERT_STATUSES } from '../model/types/Alert.ts';
import { REPLY_STATUSES } from '../model/types/OperatorMessage.ts';
import { can, type Principal, partitionsWith } from '../security/privileges.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { selectFields } from './job-render.ts';
import { parseJobId } from './jobs.ts';
import {
  encodeCursor,
  type ListAnswer,
  type ListParam,
  listValue,
  oneOf,
  PAGE_PARAMS,
  partitionsToRead,
  partitionValue,
  readPage,
  readParams,
} from './list-query.ts';

/**
 * What operator messages, user messages and alerts share: objects with a numeric id, read with View and answered
 * with Reply on their partition; a caller who cannot view one gets 404, as for one that does not exist.
 */
export type MessageKind = 'OperatorMessage' | 'UserMessage' | 'Alert';

export async function readMessage(
  store: Store,
  principal: Principal,
  kind: MessageKind,
  idText: string,
): Promise<Record<string, unknown>> {
  const id = parseJobId(idText, kind);
  const m = await store.getObject(kind, String(id));
  if (!m || !can(principal, kind, m.partition, 'View')) throw notFound(kind, id);
  return renderMessage(kind, m);
}

const renderMessage = (kind: MessageKind, m: StoredObject): Record<string, unknown> =>
  renderObject(requireType(kind), { uniqueId: m.uniqueId, businessKey: `${kind}:${m.key}` }, m.data);

/**
 * The status filter of each inbox: the parameter, the values it takes, and the stored field and values each
 * stands for. A user message has no ReplyStatus of its own: Required is its ManualTask status, Replied the others.
 */
const INBOX_FILTERS: Record<
  MessageKind,
  { param: string; allowed: readonly string[]; field: string; stored: (value: string) => string[] }
> = {
  OperatorMessage: { param: 'ReplyStatus', allowed: REPLY_STATUSES, field: 'ReplyStatus', stored: (v) => [v] },
  UserMessage: {
    param: 'ReplyStatus',
    allowed: ['Required', 'Replied'],
    field: 'Status',
    stored: (v) => (v === 'Required' ? ['ManualTask'] : ['Completed', 'Error']),
  },
  Alert: { param: 'Status', allowed: ALERT_STATUSES, field: 'Status', stored: (v) => [v] },
};

/** The query parameters of `GET /OperatorMessage`, `/UserMessage` and `/Alert`. */
export function inboxParams(kind: MessageKind): readonly ListParam[] {
  const f = INBOX_FILTERS[kind];
  return [
    { name: f.param, description: `Comma-separated, of ${f.allowed.join(', ')}` },
    { name: 'Partition', description: 'Only those of this partition' },
    ...PAGE_PARAMS,
  ];
}

/**
 * An inbox: the messages (or alerts) of `kind` the caller may view, newest first, a page after the cursor. User
 * messages are those the caller may answer: the Reply privilege too, and named among the participants.
 */
export async function listMessages(
  store: Store,
  principal: Principal,
  kind: MessageKind,
  query: unknown,
): Promise<ListAnswer> {
  const values = readParams(query, inboxParams(kind));
  const page = readPage(values, 'm');
  const f = INBOX_FILTERS[kind];
  const chosen = listValue(values, f.param);
  const privileges = kind === 'UserMessage' ? (['View', 'Reply'] as const) : (['View'] as const);
  const partitions = partitionsToRead(partitionsWith(principal, kind, privileges), partitionValue(values));
  const found = await store.listRecentObjects(kind, {
    ...(partitions !== undefined ? { partitions } : {}),
    ...(page.after !== undefined ? { beforeId: Number(page.after) } : {}),
    ...(chosen ? { fieldIn: [{ field: f.field, values: oneOf(f.param, chosen, f.allowed).flatMap(f.stored) }] } : {}),
    ...(kind === 'UserMessage' ? { participant: { user: principal.user, roles: principal.roles } } : {}),
    limit: page.limit + 1,
  });
  const shown = found.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    items: shown.map((m) => selectFields(renderMessage(kind, m), page.fields)),
    next: found.length > page.limit && last ? encodeCursor('m', last.uniqueId) : null,
  };
}

/** The id of a message the caller may reply to: 404 when it cannot see it, 403 without the Reply privilege. */
export async function visibleForReply(
  store: Store,
  principal: Principal,
  kind: MessageKind,
  idText: string,
): Promise<number> {
  const id = parseJobId(idText, kind);
  const m = await store.getObject(kind, String(id));
  if (!m || !can(principal, kind, m.partition, 'View')) throw notFound(kind, id);
  if (!can(principal, kind, m.partition, 'Reply'))
    throw forbidden(`You need the Reply privilege to reply to ${kind}:${id}`);
  return id;
}

/** A reply body, as the kind's reply form declares it (model/types/<kind>.ts): its fields, checked and typed. */
export function replyBody(kind: MessageKind, body: unknown): Record<string, unknown> {
  return validateForm(requireForm(kind, 'reply'), body, { defaultZone: 'UTC', keyShapeOf });
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

  get(principal: Principal, idText: string): Promise<Record<string, unknown>> {
    return readMessage(this.engine.store, principal, this.kind, idText);
  }

  list(principal: Principal, query: unknown): Promise<ListAnswer> {
    return listMessages(this.engine.store, principal, this.kind, query);
  }

  /**
   * The checks of a reply that need no body (docs/architecture.md §10): the message exists and is visible (else
   * 404), Reply on it (else 403). The JSON interface runs them before it reads the body; `reply` runs them again.
   */
  authorizeReply(principal: Principal, idText: string): Promise<number> {
    return visibleForReply(this.engine.store, principal, this.kind, idText);
  }

  abstract reply(principal: Principal, idText: string, body: unknown): Promise<Record<string, unknown>>;
}
