// What the writers of changes add to the audit log, in their transaction (docs/architecture.md §18): one entry per
// object created, changed or deleted, with the field-level diff (secrets masked) and the data a restore needs.
import { auditDiff } from '../model/audit-diff.ts';
import { auditActor, type Principal } from '../security/privileges.ts';
import type { AuditInput } from '../store/audit-store.ts';
import type { Store, StoredObject } from '../store/store.ts';

/**
 * Adds the entry of one object's change to the transaction `tx`: `before` absent for a creation, `after` absent for
 * a deletion. A change that changed nothing adds nothing.
 */
export async function auditObjectChange(
  tx: Store,
  principal: Principal,
  action: string,
  change: { before?: StoredObject; after?: StoredObject; time: number; detail?: string | null },
): Promise<void> {
  const object = change.after ?? change.before;
  if (!object) return;
  const diff = auditDiff(object.type, change.before?.data, change.after?.data);
  if (change.before && change.after && Object.keys(diff).length === 0) return;
  await tx.audit.add(objectEntry(principal, action, object, diff, change.before?.data ?? null, change));
}

function objectEntry(
  principal: Principal,
  action: string,
  object: StoredObject,
  diff: ReturnType<typeof auditDiff>,
  restore: Record<string, unknown> | null,
  change: { time: number; detail?: string | null },
): AuditInput {
  return {
    time: change.time,
    actor: auditActor(principal),
    action,
    object: { type: object.type, key: object.key, uniqueId: object.uniqueId },
    detail: change.detail ?? null,
    diff,
    restore,
  };
}
