import type { Engine } from '../engine/engine.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import { keyShapeOf, requireForm, requireType } from '../model/registry.ts';
import { renderObject } from '../model/render.ts';
import { validateForm } from '../model/validate.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { EventRecord } from '../store/event-store.ts';
import type { Clock } from '../time/clock.ts';
import { listEvents } from './event-list.ts';
import type { ListAnswer } from './list-query.ts';
import { userCause } from './user-cause.ts';

const EVENT = requireType('Event');

export interface EventServiceDeps {
  engine: Engine;
  clock: Clock;
  defaultTimeZone: string;
}

/** The JSON of an event (docs/architecture.md §12): its id first, then the registry's Event fields, dates in the event's zone. */
export function renderEvent(e: EventRecord, defaultZone: string): Record<string, unknown> {
  const zone = e.data.zone ?? defaultZone;
  return {
    eventId: e.eventId,
    ...renderObject(
      EVENT,
      { uniqueId: e.uniqueId, businessKey: businessKey('Event', e.eventId) },
      {
        EventDefinition: e.definition,
        RaiseSequence: e.raiseSequence,
        Status: e.status,
        RaiserComment: e.data.raiserComment,
        RaiseTime: { ms: e.raiseTime, zone },
        RaiserObject: e.data.raiserObject,
        ClearTime: e.clearTime === null ? null : { ms: e.clearTime, zone },
        ClearerComment: e.data.clearerComment,
        ClearerObject: e.data.clearerObject,
      },
    ),
  };
}

const RAISE = requireForm('Event', 'raise');
const CLEAR = requireForm('Event', 'clear');

/** The optional body of a raise or clear (the Event's forms): its comment, checked before anything is stored. */
export function parseCommentBody(body: unknown, field: 'RaiserComment' | 'ClearerComment'): string | null {
  const form = field === 'RaiserComment' ? RAISE : CLEAR;
  return (validateForm(form, body, { defaultZone: 'UTC', keyShapeOf })[field] as string | null | undefined) ?? null;
}

/**
 * Raising and clearing events and reading one. Privileges are those of the event definition
 * in its partition: View to see the definition or its events (else 404, as for a missing one), Control to raise
 * or clear. Every change runs in the engine's loop, since a raise may release waiting jobs.
 */
export class EventService {
  private readonly deps: EventServiceDeps;

  constructor(deps: EventServiceDeps) {
    this.deps = deps;
  }

  async get(principal: Principal, eventIdText: string): Promise<Record<string, unknown>> {
    return this.render(await this.visibleEvent(principal, eventIdText));
  }

  /** `GET /Event`: the events the caller may view, newest first (event-list.ts). */
  list(principal: Principal, query: unknown): Promise<ListAnswer> {
    const store = this.deps.engine.store;
    return listEvents(
      (o) => store.events.list(o),
      (e) => this.render(e),
      principal,
      query,
      this.deps.defaultTimeZone,
    );
  }

  /**
   * `DELETE /Event/<event_id>`: removes a Cleared event from the history; 409 for a Raised or Pending one (it
   * still holds or waits for its definition's place: clear it first).
   */
  async delete(principal: Principal, eventIdText: string): Promise<void> {
    const seen = await this.authorizeDelete(principal, eventIdText);
    await this.deps.engine.mutate(
      async (tx) => {
        const current = await tx.events.get(seen.eventId);
        if (!current) throw notFound('Event', seen.eventId);
        if (current.status !== 'Cleared')
          throw conflict(`${businessKey('Event', current.eventId)} is ${current.status}; clear it before deleting it`);
        await tx.events.delete(current.uniqueId);
      },
      userCause(principal, 'delete', `Deleted ${businessKey('Event', seen.eventId)}`, {
        type: 'Event',
        key: String(seen.eventId),
        uniqueId: null,
      }),
    );
  }

  /**
   * The checks of deleting an event: visible (else 404) and the Delete privilege on its definition's partition,
   * whose privileges govern its events (else 403). Run before anything else, and again by `delete`.
   */
  async authorizeDelete(principal: Principal, eventIdText: string): Promise<EventRecord> {
    const seen = await this.visibleEvent(principal, eventIdText);
    if (!can(principal, 'EventDefinition', seen.partition, 'Delete'))
      throw forbidden(
        `You need the Delete privilege on ${businessKey('EventDefinition', seen.definition)} to delete ${businessKey('Event', seen.eventId)}`,
      );
    return seen;
  }

  /** `POST /Event/<partition>.<definition>`. */
  async raise(principal: Principal, definitionText: string, body: unknown): Promise<Record<string, unknown>> {
    const key = await this.controlledDefinition(principal, definitionText, 'raise its events');
    const comment = parseCommentBody(body, 'RaiserComment');
    const by = { comment, raiser: `User:${principal.user}`, zone: this.deps.defaultTimeZone };
    const event = await this.deps.engine.events.raise(
      key,
      by,
      userCause(principal, 'raise', `Raised an event of ${key}`, { type: 'EventDefinition', key, uniqueId: null }),
    );
    return this.render(event);
  }

  /** Clears the Raised event of a definition; 409 when none is Raised. */
  async clearRaised(principal: Principal, definitionText: string, body: unknown): Promise<Record<string, unknown>> {
    const key = await this.controlledDefinition(principal, definitionText, 'clear its events');
    const by = { comment: parseCommentBody(body, 'ClearerComment'), clearer: `User:${principal.user}` };
    return this.render(await this.deps.engine.events.clearRaised(key, by));
  }

  /** Clears the Pending events of a definition (possibly none). */
  async clearAllPending(
    principal: Principal,
    definitionText: string,
    body: unknown,
  ): Promise<{ Cleared: Record<string, unknown>[] }> {
    const key = await this.controlledDefinition(principal, definitionText, 'clear its events');
    const by = { comment: parseCommentBody(body, 'ClearerComment'), clearer: `User:${principal.user}` };
    const events = await this.deps.engine.events.clearAllPending(key, by);
    return { Cleared: events.map((e) => this.render(e)) };
  }

  /** `POST /Event/<event_id>/clear`; 409 when it is Cleared already. */
  async clear(principal: Principal, eventIdText: string, body: unknown): Promise<Record<string, unknown>> {
    const seen = await this.authorizeClear(principal, eventIdText);
    const by = { comment: parseCommentBody(body, 'ClearerComment'), clearer: `User:${principal.user}` };
    return this.render(await this.deps.engine.events.clearEvent(seen.eventId, by));
  }

  /**
   * The checks of clearing one event that need no body (docs/architecture.md §10): the event exists and its
   * definition's partition is visible (else 404), Control on it (else 403). Run before the body is read, and again.
   */
  async authorizeClear(principal: Principal, eventIdText: string): Promise<EventRecord> {
    const seen = await this.visibleEvent(principal, eventIdText);
    if (!can(principal, 'EventDefinition', seen.partition, 'Control'))
      throw forbidden(
        `You need the Control privilege on ${businessKey('EventDefinition', seen.definition)} to clear ${businessKey('Event', seen.eventId)}`,
      );
    return seen;
  }

  /** The event, when it exists and the caller may view its definition's partition; else 404. */
  private async visibleEvent(principal: Principal, eventIdText: string): Promise<EventRecord> {
    const parsed = parseKey('eventId', eventIdText);
    if (!parsed) throw notFound('Event', eventIdText);
    const event = await this.deps.engine.store.events.get(parsed.key);
    if (!event || !can(principal, 'EventDefinition', event.partition, 'View')) throw notFound('Event', parsed.key);
    return event;
  }

  /**
   * The canonical key of a definition that exists and that the caller may see (else 404) and control (else 403):
   * the checks of a raise or a clear by definition that need no body, run before it is read and again.
   */
  async controlledDefinition(principal: Principal, text: string, what: string): Promise<string> {
    const parsed = parseKey('partitioned', text);
    if (!parsed || !can(principal, 'EventDefinition', parsed.partition, 'View'))
      throw notFound('EventDefinition', parsed?.key ?? text);
    if (!(await this.deps.engine.store.getObject('EventDefinition', parsed.key)))
      throw notFound('EventDefinition', parsed.key);
    const name = businessKey('EventDefinition', parsed.key);
    if (!can(principal, 'EventDefinition', parsed.partition, 'Control'))
      throw forbidden(`You need the Control privilege on ${name} to ${what}`);
    return parsed.key;
  }

  private render(e: EventRecord): Record<string, unknown> {
    return renderEvent(e, this.deps.defaultTimeZone);
  }
}
