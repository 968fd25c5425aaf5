// An audit entry as its table's row, in both dialects (kysely-audit.ts writes SQLite's rows, pg-audit-append.ts
// PostgreSQL's columns): the one place that says which column holds what.
import type { AuditInput } from './audit-store.ts';
import type { Database } from './tables.ts';

export type AuditRow = Database['audit_entries'];

/** The columns PostgreSQL's append takes per entry (the id and the hashes are made by its statement). */
export const ENTRY_COLUMNS = [
  'time',
  'actor',
  'api_key_id',
  'address',
  'interface',
  'action',
  'object_type',
  'object_key',
  'object_unique_id',
  'detail',
  'diff',
  'restore',
] as const satisfies readonly (keyof AuditRow)[];

export function auditRow(id: number, e: AuditInput, prevHash: string, hash: string): AuditRow {
  return {
    id,
    time: e.time,
    actor: e.actor.user,
    api_key_id: e.actor.apiKeyId,
    address: e.actor.address,
    interface: e.actor.interface,
    action: e.action,
    object_type: e.object?.type ?? null,
    object_key: e.object?.key ?? null,
    object_unique_id: e.object?.uniqueId ?? null,
    detail: e.detail,
    diff: e.diff ? JSON.stringify(e.diff) : null,
    restore: e.restore ? JSON.stringify(e.restore) : null,
    prev_hash: prevHash,
    hash,
  };
}
