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
 * The dispatch objects kept between passes while the store's data version stays the same (SQLite: it moves with
 * every committed object write, this process's or another's on the same file; docs/architecture.md §2). A pass
 * follows nearly every job's end, and reading and parsing three object lists was a large share of it. Without a
 * data version (PostgreSQL: another node's write could not be seen) every pass reads them. Read only: the lists
 * are shared by the passes that find them.
 */
export class DispatchObjectsCache {
  private readonly version: () => string | undefined;
  private kept: { version: string; objects: DispatchObjects } | undefined;

  constructor(version: () => string | undefined) {
    this.version = version;
  }

  async read(tx: Store): Promise<DispatchObjects> {
    const version = this.version(); // read before the data it validates
    if (version !== undefined && this.kept?.version === version) return this.kept.objects;
    const objects = await readDispatchObjects(tx);
    this.kept = version === undefined ? undefined : { version, objects };
    return objects;
  }
}
