// Putting an object back as an audit entry saw it before (docs/architecture.md §18): a deleted object is created
// again with its stored data, a change has its fields set back to their "before" side. Only when nothing changed
// the object since that entry; the restore is itself audited, in its own transaction.
import { conflict, invalid } from '../errors.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import { getType } from '../model/registry.ts';
import { checkRules } from '../model/validate.ts';
import type { Principal } from '../security/privileges.ts';
import type { AuditEntry } from '../store/audit-store.ts';
import type { StoredObject } from '../store/store.ts';
import { auditObjectChange } from './audit-record.ts';
import type { ObjectReader } from './object-reads.ts';
import {
  checkWithOthers,
  insertNew,
  type ObjectServiceDeps,
  partitionOf,
  requirePrivilege,
  resolveReferences,
} from './object-write-steps.ts';

export class ObjectRestorer {
  private readonly deps: ObjectServiceDeps;
  private readonly reader: ObjectReader;

  constructor(deps: ObjectServiceDeps, reader: ObjectReader) {
    this.deps = deps;
    this.reader = reader;
  }

  /** Restores from `entry`; answers the object as it is now. 409 when the object changed since the entry. */
  async restore(principal: Principal, entry: AuditEntry): Promise<Record<string, unknown>> {
    const type = entry.object ? getType(entry.object.type) : undefined;
    const parsed = type && entry.object ? parseKey(type.key, entry.object.key) : undefined;
    if (!type || !parsed || !entry.object || !entry.restore || !entry.diff)
      throw invalid(`AuditEntry:${entry.id} has no earlier state of an object to put back`);
    const deleted = entry.action === 'delete';
    const what = businessKey(type.name, parsed.key);
    requirePrivilege(principal, type, parsed.partition, deleted ? 'Create' : 'Edit', `restore ${what}`);
    const before = entry.restore;
    const fields = Object.keys(entry.diff);
    let old: StoredObject | undefined;
    const restored = await this.deps.store.transaction(async (tx) => {
      const latest = await tx.audit.latestAbout(type.name, parsed.key);
      if (latest !== entry.id)
        throw conflict(`${what} changed after AuditEntry:${entry.id} (see AuditEntry:${latest}); restore that one`);
      const current = await tx.getObject(type.name, parsed.key);
      old = current;
      const now = this.deps.clock.now();
      const detail = `from AuditEntry:${entry.id}`;
      if (deleted) {
        if (current) throw conflict(`${what} exists again`);
        if (partitionOf(type) && !(await tx.getObject('Partition', parsed.partition)))
          throw conflict(`Partition ${parsed.partition} of ${what} no longer exists`);
        const object = await insertNew(this.deps, tx, principal, type, parsed, { ...before });
        await auditObjectChange(tx, principal, 'restore', { after: object, time: now, detail });
        return object;
      }
      if (!current) throw conflict(`${what} no longer exists`);
      if (current.protection === 'locked') throw conflict(`${what} is built in and cannot be changed`);
      const merged: Record<string, unknown> = { ...current.data };
      for (const f of fields)
        if (Object.hasOwn(before, f)) merged[f] = before[f];
        else delete merged[f];
      checkRules(type, merged);
      const refs = await resolveReferences(tx, principal, type, merged, current.uniqueId);
      await checkWithOthers(tx, principal, type, parsed.key, merged);
      const next = { ...current, data: merged, modificationTime: now };
      await tx.updateObject(next, refs);
      await auditObjectChange(tx, principal, 'restore', { before: current, after: next, time: now, detail });
      return next;
    });
    await this.deps.onChange?.(type.name, old, restored);
    return this.reader.rendered(type, restored);
  }
}
