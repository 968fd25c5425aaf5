import type { EVENT_STATUSES } from '../model/types/Event.ts';

/**
 * Events: the raises of event definitions, kept in their own table (migration 0004). A definition has at most
 * one Raised event (a partial unique index holds it to that), Pending ones waiting behind it in raise order, and
 * Cleared ones as history until the definition is deleted.
 */

export type EventStatus = (typeof EVENT_STATUSES)[number];

/** What the columns do not hold: comments, who raised and cleared, and the zone the times are shown in. */
export interface EventData {
  raiserComment: string | null;
  /** `User:<name>` or `Job:<id>`. */
  raiserObject: string;
  clearerComment: string | null;
  clearerObject: string | null;
  /** Zone the event's times are written in; the server's default zone when absent. */
  zone?: string;
}

export interface EventRecord {
  uniqueId: number;
  /** `<definition name><raiseSequence>`, unique over every definition. */
  eventId: string;
  /** Business key of the definition without the type, e.g. `GLOBAL.DataReady`. */
  definition: string;
  /** Partition of the definition, whose privileges govern the event. */
  partition: string;
  raiseSequence: number;
  status: EventStatus;
  raiseTime: number;
  clearTime: number | null;
  data: EventData;
}

/** A page of `GET /Event`: newest (highest uniqueId) first, filtered in SQL. */
export interface EventListOptions {
  /** Only these partitions (of the definition); undefined: all. */
  partitions?: readonly string[];
  definition?: string;
  statuses?: readonly EventStatus[];
  /** Raised at or after this instant (epoch ms). */
  since?: number;
  /** Keyset pagination: events with a smaller uniqueId only. */
  beforeId?: number;
  limit: number;
}

export interface EventStore {
  insert(event: EventRecord): Promise<void>;
  /** Writes status, clear time and data (the rest never changes). */
  update(event: EventRecord): Promise<void>;
  get(eventId: string): Promise<EventRecord | undefined>;
  /** The Raised event of a definition, if any. */
  raised(definition: string): Promise<EventRecord | undefined>;
  /** Pending events of a definition, oldest raise first. */
  pending(definition: string, limit: number): Promise<EventRecord[]>;
  /** The highest RaiseSequence a definition gave, its deleted events' included; 0 when it has none. */
  maxSequence(definition: string): Promise<number>;
  /** Those of `eventIds` that some event has already. */
  takenIds(eventIds: readonly string[]): Promise<string[]>;
  /** Some Raised or Pending event of a definition (the delete check), or undefined. */
  anyLive(definition: string): Promise<EventRecord | undefined>;
  /** Events newest first, as the options filter them. */
  list(options: EventListOptions): Promise<EventRecord[]>;
  /** Deletes one event (a Cleared one: the service checks), keeping its RaiseSequence for `maxSequence`. */
  delete(uniqueId: number): Promise<void>;
  /** Deletes every event of a definition, history included. */
  deleteOfDefinition(definition: string): Promise<void>;
}
