// What the audit chain's hash covers (docs/architecture.md §18), shared by the writer and `millrace audit verify`.
import type { ChainLink } from '../domain/audit-chain.ts';
import type { AuditEntry, AuditInput } from './audit-store.ts';

/** What the hash covers: every column but the hashes, in one record. */
export function chainContent(id: number, e: AuditInput): Record<string, unknown> {
  return {
    id,
    time: e.time,
    actor: e.actor,
    action: e.action,
    object: e.object,
    detail: e.detail,
    diff: e.diff,
    restore: e.restore,
  };
}

/** A stored entry as the chain check sees it. */
export const linkOfEntry = (e: AuditEntry): ChainLink => ({
  id: e.id,
  content: chainContent(e.id, e),
  prevHash: e.prevHash,
  hash: e.hash,
});
