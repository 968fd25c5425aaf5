// Writing the objects of an import (docs/architecture.md §14) inside the import's one transaction, with the same
// checks as a create or an update but the import's own rules: fields the archive does not carry are kept, and
// built-in locked objects are left as they are.
import { isDeepStrictEqual } from 'node:util';
import { forbidden, invalid } from '../errors.ts';
import { businessKey, type ParsedKey, parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { checkRules, validateObjectBody } from '../model/validate.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store, StoredObject } from '../store/store.ts';
import { auditObjectChange } from './audit-record.ts';
import {
  applyIdentity,
  checkWithOthers,
  insertNew,
  keyForm,
  type ObjectServiceDeps,
  partitionOf,
  precheck,
  resolveReferences,
  sealSecrets,
  validateOptions,
} from './object-write-steps.ts';

/** What an import did to one object; `before`/`after` are told to the engine after the commit. */
export interface ImportOutcome {
  outcome: 'created' | 'changed' | 'unchanged' | 'kept';
  before?: StoredObject;
  after: StoredObject;
}

export class ObjectImporter {
  private readonly deps: ObjectServiceDeps;

  constructor(deps: ObjectServiceDeps) {
    this.deps = deps;
  }

  /**
   * Writes one object of an import inside the import's transaction: the archive's object replaces the stored one
   * field by field (fields the archive does not carry, such as passwords and run-time state, are kept). Needs
   * Create for a new object and Edit for an existing one. Built-in locked objects are kept as they are. `body` is
   * the JSON-input form (from the object XML); `precheckImport` ran on it before the transaction.
   */
  async importObject(
    tx: Store,
    principal: Principal,
    type: ObjectType,
    key: string,
    body: Record<string, unknown>,
  ): Promise<ImportOutcome> {
    const parsed = parseKey(type.key, key);
    if (!parsed) throw invalid(`"${key}" is not a ${type.name} key: ${keyForm(type)}`);
    const current = await tx.getObject(type.name, parsed.key);
    const values = this.importValues(type, parsed, body);
    const partitionType = partitionOf(type);
    const what = businessKey(type.name, parsed.key);
    if (!current) {
      if (!can(principal, type.name, parsed.partition, 'Create'))
        throw forbidden(`You need the Create privilege to create ${what}`);
      if (partitionType && !(await tx.getObject('Partition', parsed.partition)))
        throw invalid(`Partition ${parsed.partition} does not exist`);
      const created = await insertNew(this.deps, tx, principal, type, parsed, values);
      await auditObjectChange(tx, principal, 'create', {
        after: created,
        time: created.creationTime,
        detail: 'import',
      });
      return { outcome: 'created', after: created };
    }
    // Read-only state (a process server's status, an alert source's Enabled) and secrets stay as they are.
    const merged = { ...current.data };
    for (const f of type.fields)
      if (!f.readOnly && !f.derived && f.kind.kind !== 'secret' && f.name in values) merged[f.name] = values[f.name];
    if (isDeepStrictEqual(merged, current.data)) return { outcome: 'unchanged', before: current, after: current };
    if (current.protection === 'locked') return { outcome: 'kept', before: current, after: current };
    if (!can(principal, type.name, parsed.partition, 'View') || !can(principal, type.name, parsed.partition, 'Edit'))
      throw forbidden(`You need the Edit privilege to change ${what}`);
    const refs = await resolveReferences(tx, principal, type, merged, current.uniqueId);
    await checkWithOthers(tx, principal, type, parsed.key, merged);
    const next = { ...current, data: merged, modificationTime: this.deps.clock.now() };
    await tx.updateObject(next, refs);
    await auditObjectChange(tx, principal, 'update', {
      before: current,
      after: next,
      time: next.modificationTime,
      detail: 'import',
    });
    return { outcome: 'changed', before: current, after: next };
  }

  /** The checks of an imported object that need no database: fields, cross-field rules, host names (DNS). */
  async precheckImport(type: ObjectType, key: string, body: Record<string, unknown>): Promise<void> {
    const parsed = parseKey(type.key, key);
    if (!parsed) throw invalid(`"${key}" is not a ${type.name} key: ${keyForm(type)}`);
    await precheck(this.deps, type, this.importValues(type, parsed, body));
  }

  /** Tells the engine what an import changed, after its commit (as create and update do for theirs). */
  async importCommitted(type: ObjectType, result: ImportOutcome): Promise<void> {
    if (result.outcome === 'created' || result.outcome === 'changed')
      await this.deps.onChange?.(type.name, result.before, result.after);
  }

  private importValues(type: ObjectType, parsed: ParsedKey, body: Record<string, unknown>): Record<string, unknown> {
    const values = validateObjectBody(type, body, validateOptions(this.deps, 'create'));
    applyIdentity(type, parsed, values);
    checkRules(type, values);
    sealSecrets(this.deps, type, values);
    return values;
  }
}
