// What a deletion checks inside its transaction (docs/architecture.md §10): built-in objects stay, an object still
// referred to by another object or by a job stays, an event definition takes its cleared history with it and a job
// definition its runtime statistics.
import { conflict, notFound } from '../errors.ts';
import type { TypeName } from '../model/fields.ts';
import { businessKey, type ParsedKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import type { Store, StoredObject } from '../store/store.ts';

/** Jobs, history included, keep these objects referenced: a queue can be deleted only when no job names it. */
const JOB_COLUMN: Partial<Record<TypeName, 'definition' | 'queue' | 'processServer'>> = {
  JobDefinition: 'definition',
  Queue: 'queue',
  ProcessServer: 'processServer',
};

/** Deletes the object unless something keeps it (409 naming what); answers the object as it was. */
export async function deleteStoredObject(tx: Store, type: ObjectType, parsed: ParsedKey): Promise<StoredObject> {
  const current = await tx.getObject(type.name, parsed.key);
  if (!current) throw notFound(type.name, parsed.key);
  if (current.protection !== null)
    throw conflict(`${businessKey(type.name, parsed.key)} is built in and cannot be deleted`);
  const referrer = await tx.findReferrer(current.uniqueId);
  if (referrer)
    throw conflict(
      `${businessKey(type.name, parsed.key)} is still referenced by ${businessKey(referrer.type, referrer.key)} (field ${referrer.path})`,
    );
  const column = JOB_COLUMN[type.name];
  const job = column ? await tx.jobs.anyReferring(column, parsed.key) : undefined;
  if (job !== undefined) throw conflict(`${businessKey(type.name, parsed.key)} is still referenced by Job:${job}`);
  if (type.traits.owns === 'Event') await deleteEvents(tx, parsed.key);
  if (type.traits.files) await tx.blobs.delete(type.traits.files, parsed.key);
  // A definition takes its runtime statistics with it: one made again under its key starts afresh (docs/architecture.md §8b).
  if (column === 'definition') await tx.runtimeStats.drop(parsed.key);
  await tx.deleteObject(current.uniqueId);
  return current;
}

/**
 * An event definition goes with its Cleared history, but not while an event of it is Raised or Pending (jobs may
 * wait for it). The engine's lock keeps a raise from slipping in between the check and the delete (PostgreSQL).
 */
async function deleteEvents(tx: Store, definition: string): Promise<void> {
  await tx.jobs.lockDispatch();
  const live = await tx.events.anyLive(definition);
  if (live)
    throw conflict(
      `${businessKey('EventDefinition', definition)} still has the ${live.status} event ${businessKey('Event', live.eventId)}; clear it first`,
    );
  await tx.events.deleteOfDefinition(definition);
  await tx.fileWatches.deleteOfDefinition(definition);
}
