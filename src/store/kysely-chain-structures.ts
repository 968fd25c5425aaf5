import type { ChainStructure } from '../domain/job.ts';
import type { ChainJobId } from './job-store.ts';

/**
 * Chain structures of one database read lately, shared by its store and their transactions. A chain reads its
 * structure at every step: without the cache each step would parse it again. A structure never changes once
 * written. The key is both ids: a jobId taken by a transaction that rolled back is given to the next job, but its
 * uniqueId differs on PostgreSQL (a real sequence), and on SQLite (one node) writing the new job's structure drops
 * the old entry (putChainStructure). Entries are frozen so that no caller can change the shared copy.
 */
export class ChainStructureCache {
  private readonly entries = new Map<string, ChainStructure>();

  get(chain: ChainJobId): ChainStructure | undefined {
    return this.entries.get(cacheKey(chain));
  }

  forget(chain: ChainJobId): void {
    this.entries.delete(cacheKey(chain));
  }

  remember(chain: ChainJobId, structure: ChainStructure): ChainStructure {
    const oldest = this.entries.keys().next();
    if (this.entries.size >= MAX_STRUCTURES && !oldest.done) this.entries.delete(oldest.value);
    this.entries.set(cacheKey(chain), deepFreeze(structure));
    return structure;
  }
}

const MAX_STRUCTURES = 256;
const cacheKey = (chain: ChainJobId): string => `${chain.jobId}/${chain.uniqueId}`;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
