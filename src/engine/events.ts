import type { JobRecord } from '../domain/job.ts';
import { commentFor } from '../domain/event-comment.ts';
import { substitute } from '../domain/substitute.ts';
import { conflict, notFound } from '../errors.ts';
import type { JobStatus } from '../model/fields.ts';
import { businessKey } from '../model/keys.ts';
import type { EventRecord, EventStore } from '../store/event-store.ts';
import type { Store } from '../store/store.ts';
import { onEventRaised } from './event-waits.ts';
import type { Effects, Kernel } from './kernel.ts';
import { itemAt } from '../domain/item-at.ts';

/**
 * Raising and clearing events. A definition has at most one Raised event; a raise while one is
 * Raised waits as Pending, and clearing the Raised one promotes the oldest Pending one. Every function runs inside
 * an engine transaction in the serial loop, because an event becoming Raised releases waiting jobs in the same
 * transaction (`onEventRaised`). `raiseOnFinal` is the reaction that raises a definition's RaiseEvents.
 */

/** Who raises an event, and why. */
export interface RaiseBy {
  comment?: string | null;
  /** `User:<name>` or `Job:<id>`. A job is exempt from RequiresCommentOnRaise. */
  raiser: string;
  /** Zone the event's times are written in; the server's default zone when left out. */
  zone?: string;
}

/** Who clears an event, and why. */
export interface ClearBy {
  comment?: string | null;
  /** `User:<name>` or `Job:<id>`. A job is exempt from RequiresCommentOnClear. */
  clearer: string;
}

/** `<definition name><sequence>`: the key is `<partition>.<name>` and neither part holds a dot. */
const eventIdOf = (definitionKey: string, sequence: number): string =>
  `${definitionKey.slice(definitionKey.indexOf('.') + 1)}${sequence}`;

/**
 * The next RaiseSequence: one more than the definition's highest, moved on while the id it makes belongs to an
 * event of another definition (`Data1` raised the 1st time and `Data` the 11th both make `Data11`; so do two
 * definitions of one name in different partitions).
 */
async function nextSequence(events: EventStore, definitionKey: string): Promise<number> {
  let next = (await events.maxSequence(definitionKey)) + 1;
  // The first look-up is the usual answer; collisions are looked up a hundred ids at a time.
  for (let batch = 1; ; batch = 100) {
    const ids = Array.from({ length: batch }, (_, i) => eventIdOf(definitionKey, next + i));
    const taken = new Set(await events.takenIds(ids));
    const free = ids.findIndex((id) => !taken.has(id));
    if (free >= 0) return next + free;
    next += batch;
  }
}

/** Raises an event of the definition: Raised when none is, else Pending behind the Raised one. */
export async function raiseEvent(
  kernel: Kernel,
  tx: Store,
  definitionKey: string,
  by: RaiseBy,
  now: number,
  effects: Effects,
): Promise<EventRecord> {
  const def = await tx.getObject('EventDefinition', definitionKey);
  if (!def) throw notFound('EventDefinition', definitionKey);
  const comment = commentFor(def, by.comment, by.raiser, 'Raise');
  const uniqueId = itemAt(await tx.nextUniqueIds(1), 0);
  const raiseSequence = await nextSequence(tx.events, def.key);
  const raised = (await tx.events.raised(def.key)) === undefined;
  const event: EventRecord = {
    uniqueId,
    eventId: eventIdOf(def.key, raiseSequence),
    definition: def.key,
    partition: def.partition,
    raiseSequence,
    status: raised ? 'Raised' : 'Pending',
    raiseTime: now,
    clearTime: null,
    data: {
      raiserComment: comment,
      raiserObject: by.raiser,
      clearerComment: null,
      clearerObject: null,
      ...(by.zone !== undefined ? { zone: by.zone } : {}),
    },
  };
  await tx.events.insert(event);
  if (!raised) return event;
  await onEventRaised(kernel, tx, def.key, now, effects);
  // What the jobs released by it did to the event (a job may consume it) is part of the answer.
  return (await tx.events.get(event.eventId)) ?? event;
}

async function markCleared(tx: Store, event: EventRecord, comment: string | null, clearer: string, now: number) {
  const cleared: EventRecord = {
    ...event,
    status: 'Cleared',
    clearTime: now,
    data: { ...event.data, clearerComment: comment, clearerObject: clearer },
  };
  await tx.events.update(cleared);
  return cleared;
}

/** The oldest Pending event of the definition becomes Raised, if there is one. */
async function promoteNext(
  kernel: Kernel,
  tx: Store,
  definitionKey: string,
  now: number,
  effects: Effects,
): Promise<void> {
  const [next] = await tx.events.pending(definitionKey, 1);
  if (!next) return;
  await tx.events.update({ ...next, status: 'Raised' });
  await onEventRaised(kernel, tx, definitionKey, now, effects);
}

/**
 * Clears a Raised or Pending event read in this transaction; clearing the Raised one promotes the oldest Pending
 * one. 409 when it is Cleared already.
 */
export async function clearEvent(
  kernel: Kernel,
  tx: Store,
  event: EventRecord,
  by: ClearBy,
  now: number,
  effects: Effects,
): Promise<EventRecord> {
  if (event.status === 'Cleared') throw conflict(`${businessKey('Event', event.eventId)} is already Cleared`);
  const def = await tx.getObject('EventDefinition', event.definition);
  const cleared = await markCleared(tx, event, commentFor(def, by.comment, by.clearer, 'Clear'), by.clearer, now);
  if (event.status === 'Raised') await promoteNext(kernel, tx, event.definition, now, effects);
  return cleared;
}

/** Clears the Raised event of the definition (promoting the next Pending one); undefined when none is Raised. */
export async function clearRaised(
  kernel: Kernel,
  tx: Store,
  definitionKey: string,
  by: ClearBy,
  now: number,
  effects: Effects,
): Promise<EventRecord | undefined> {
  const raised = await tx.events.raised(definitionKey);
  return raised ? clearEvent(kernel, tx, raised, by, now, effects) : undefined;
}

/** Clears every Pending event of the definition, oldest first; the Raised one stays. */
export async function clearAllPending(
  tx: Store,
  definitionKey: string,
  by: ClearBy,
  now: number,
  _fx: Effects,
): Promise<EventRecord[]> {
  const cleared: EventRecord[] = [];
  let comment: string | null | undefined;
  for (;;) {
    const batch = await tx.events.pending(definitionKey, 500);
    if (batch.length === 0) return cleared;
    if (comment === undefined)
      comment = commentFor(await tx.getObject('EventDefinition', definitionKey), by.comment, by.clearer, 'Clear');
    for (const e of batch) cleared.push(await markCleared(tx, e, comment, by.clearer, now));
  }
}

export async function isRaised(tx: Store, definitionKey: string): Promise<boolean> {
  return (await tx.events.raised(definitionKey)) !== undefined;
}

/**
 * A job whose wait has ClearsEvent starts: it consumes the Raised event (clearer `Job:<id>`, the definition's
 * default clear comment). Nothing happens when none is Raised.
 */
export function consumeEvent(
  kernel: Kernel,
  tx: Store,
  definitionKey: string,
  jobId: number,
  now: number,
  effects: Effects,
): Promise<EventRecord | undefined> {
  return clearRaised(kernel, tx, definitionKey, { clearer: `Job:${jobId}` }, now, effects);
}

const DEFAULT_RAISE_COMMENT = 'Event raised by process:${jobid} (${jobdescription}) going to status ${jobstatus}';

/** Reaction to a final status: the definition's RaiseEvents for that status, with their comments substituted. */
export async function raiseOnFinal(
  kernel: Kernel,
  tx: Store,
  { job, status }: { job: JobRecord; status: JobStatus },
  now: number,
  effects: Effects,
): Promise<void> {
  for (const r of job.data.spec.raiseEvents ?? [])
    if (r.status === status) {
      const comment = raiseComment(r.comment ?? DEFAULT_RAISE_COMMENT, job, status);
      await raiseEvent(kernel, tx, r.event, { comment, raiser: `Job:${job.jobId}` }, now, effects);
    }
}

/** The substitution variables of a raise comment. */
function raiseComment(text: string, job: JobRecord, status: JobStatus): string {
  return substitute(text, {
    jobid: String(job.jobId),
    jobstatus: status,
    jobdescription: job.description ?? job.definition,
    jobdefinition: job.definition,
    returncode: job.returnCode === null ? '' : String(job.returnCode),
    partition: job.partition,
  });
}
