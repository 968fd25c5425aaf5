// The hash chain of the audit log (docs/architecture.md §18): each entry's hash covers the hash before it and the
// entry's own canonical JSON, so an entry edited or removed in the database breaks the line from there on.
import { hash } from 'node:crypto';

/** JSON with object keys sorted at every depth: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}

/** sha256 over the previous entry's hash and this entry's canonical JSON, hex. */
// One-shot `hash`: a hash object per entry (createHash) costs more than the hashing itself at this size.
export const chainHash = (previous: string, entry: unknown): string =>
  hash('sha256', `${previous}\n${canonicalJson(entry)}`, 'hex');

/** One stored entry as the chain sees it: its id, what was hashed, and the two hashes. */
export interface ChainLink {
  id: number;
  content: unknown;
  prevHash: string;
  hash: string;
}

/** What a check of the chain found: fine, or the first entry where the line breaks and why. */
export type ChainProblem = { id: number; problem: string };

/**
 * Checks a run of entries in id order, continuing from `before` (the last link checked, or undefined at the oldest
 * kept entry, whose own `prevHash` is taken as given: older entries may have been purged).
 */
export function checkLinks(
  before: { id: number; hash: string } | undefined,
  links: readonly ChainLink[],
): ChainProblem | undefined {
  let last = before;
  for (const link of links) {
    if (last && link.id !== last.id + 1)
      return { id: link.id, problem: `entries ${last.id + 1} to ${link.id - 1} are missing (deleted)` };
    if (last && link.prevHash !== last.hash)
      return {
        id: link.id,
        problem: `entry ${link.id} does not follow entry ${last.id} (an entry was deleted or replaced)`,
      };
    if (chainHash(link.prevHash, link.content) !== link.hash)
      return { id: link.id, problem: `entry ${link.id} was changed after it was written` };
    last = { id: link.id, hash: link.hash };
  }
  return undefined;
}
