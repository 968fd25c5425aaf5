import { listAllObjects } from '../store/all-objects.ts';
import type { Store, StoredObject } from '../store/store.ts';

/** The objects a dispatch pass plans with: every queue, queue provider and process server. */
export interface DispatchObjects {
  queues: StoredObject<'Queue'>[];
  providers: StoredObject<'QueueProvider'>[];
  servers: StoredObject<'ProcessServer'>[];
}

export async function readDispatchObjects(tx: Store): Promise<DispatchObjects> {
  return {
    queues: await listAllObjects(tx, 'Queue'),
    providers: await listAllObjects(tx, 'QueueProvider'),
    servers: await listAllObjects(tx, 'ProcessServer'),
  };
}

/**
 * The dispatch objects kept between passes while the store's version of objects stays the same: on SQLite
 * `dataVersion` (it moves with every committed object write, this process's or another's on the same file), read
 * before the pass; on PostgreSQL `objectsVersion`, one small read inside the pass's transaction, moved by every
 * node's object writes (docs/architecture.md §2). A pass follows nearly every job's end, and reading and parsing
 * three object lists (a statement or more each on PostgreSQL) was a large share of it. Read only: the lists are
 * shared by the passes that find them.
 */
export class DispatchObjectsCache {
  private readonly version: (tx: Store) => Promise<string | undefined>;
  private kept: { version: string; objects: DispatchObjects } | undefined;

  constructor(version: (tx: Store) => Promise<string | undefined>) {
    this.version = version;
  }

  async read(tx: Store): Promise<DispatchObjects> {
    const version = await this.version(tx); // read before the data it validates
    if (version !== undefined && this.kept?.version === version) return this.kept.objects;
    const objects = await readDispatchObjects(tx);
    this.kept = version === undefined ? undefined : { version, objects };
    return objects;
  }
}
