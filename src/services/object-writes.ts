// Creating, changing, switching and deleting one definition under the privilege rules of docs/architecture.md §10:
// the body-free checks first (run also by the routes before they read a body), then the body's, then one
// transaction, then the engine told after the commit.
import { conflict, invalid, MillraceError, notFound } from '../errors.ts';
import { businessKey, type ParsedKey, parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { dropServerOwned, namesServerOwned } from '../model/round-trip.ts';
import { checkRules, validateObjectBody } from '../model/validate.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { StoredObject } from '../store/store.ts';
import { auditObjectChange } from './audit-record.ts';
import { onlyTunableChanged } from './builtin-tunable.ts';
import { deleteStoredObject } from './object-deletes.ts';
import type { ObjectReader } from './object-reads.ts';
import {
  applyIdentity,
  checkWithOthers,
  insertNew,
  keyForm,
  type ObjectServiceDeps,
  partitionOf,
  precheck,
  requirePrivilege,
  resolveReferences,
  sealSecrets,
  validateOptions,
} from './object-write-steps.ts';

export class ObjectWriter {
  private readonly deps: ObjectServiceDeps;
  private readonly reader: ObjectReader;

  constructor(deps: ObjectServiceDeps, reader: ObjectReader) {
    this.deps = deps;
    this.reader = reader;
  }

  /**
   * The checks of a create that need no body (docs/architecture.md §10): the key, View on its partition (else 404),
   * Create (else 403). The JSON interface runs them before it reads the body, and `create` again.
   */
  authorizeCreate(principal: Principal, type: ObjectType, pathKey: string): ParsedKey {
    const parsed = parseKey(type.key, pathKey);
    if (!parsed) throw invalid(`"${pathKey}" is not a ${type.name} key: ${keyForm(type)}`);
    if (!can(principal, type.name, parsed.partition, 'View'))
      throw notFound(partitionOf(type) ?? type.name, parsed.partition);
    requirePrivilege(
      principal,
      type,
      parsed.partition,
      'Create',
      `create a ${type.name} in partition ${parsed.partition}`,
    );
    return parsed;
  }

  /**
   * The checks of a change, a deletion or a switch that need no body: the object exists and the caller may view
   * it (else 404), and holds `privilege` (else 403). Run before the body is read, and again by the operation.
   */
  async authorizeChange(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    privilege: 'Edit' | 'Delete' | 'Control',
    what: string,
  ): Promise<ParsedKey> {
    const { parsed } = await this.reader.find(principal, type, pathKey);
    requirePrivilege(principal, type, parsed.partition, privilege, `${what} ${businessKey(type.name, parsed.key)}`);
    return parsed;
  }

  async create(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    const parsed = this.authorizeCreate(principal, type, pathKey);
    const partitionType = partitionOf(type);
    const given = dropServerOwned(type, body ?? {}, undefined, businessKey(type.name, parsed.key));
    const values = validateObjectBody(type, given, validateOptions(this.deps, 'create'));
    applyIdentity(type, parsed, values);
    checkRules(type, values);
    await precheck(this.deps, type, values);
    sealSecrets(this.deps, type, values);
    const created = await this.deps.store.transaction(async (tx) => {
      if (partitionType && !(await tx.getObject('Partition', parsed.partition)))
        throw notFound('Partition', parsed.partition);
      if (await tx.getObject(type.name, parsed.key))
        throw conflict(`Object ${businessKey(type.name, parsed.key)} already exists`);
      const object = await insertNew(this.deps, tx, principal, type, parsed, values);
      await auditObjectChange(tx, principal, 'create', { after: object, time: object.creationTime });
      return object;
    });
    await this.deps.onChange?.(type.name, undefined, created);
    return this.reader.rendered(type, created);
  }

  /**
   * xml-put: creates the object, or changes it when it exists. A create refused because another request created
   * the object meanwhile becomes the change it now is.
   */
  async put(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    body: unknown,
  ): Promise<{ saved: Record<string, unknown>; created: boolean }> {
    const parsed = parseKey(type.key, pathKey);
    const exists = async () =>
      parsed !== undefined && (await this.deps.store.getObject(type.name, parsed.key)) !== undefined;
    if (await exists()) return { saved: await this.update(principal, type, pathKey, body), created: false };
    try {
      return { saved: await this.create(principal, type, pathKey, body), created: true };
    } catch (e) {
      if (e instanceof MillraceError && e.status === 409 && (await exists()))
        return { saved: await this.update(principal, type, pathKey, body), created: false };
      throw e;
    }
  }

  async update(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    const parsed = await this.authorizeChange(principal, type, pathKey, 'Edit', 'change');
    // A body copied from GET: its server-owned fields must be as they are now (else someone changed the object).
    const current = namesServerOwned(type, body)
      ? JSON.parse(await this.reader.getText(principal, type, pathKey))
      : undefined;
    const given = dropServerOwned(type, body ?? {}, current, businessKey(type.name, parsed.key));
    const values = validateObjectBody(type, given, validateOptions(this.deps, 'update'));
    applyIdentity(type, parsed, values);
    await precheck(this.deps, type, values);
    sealSecrets(this.deps, type, values);
    let before: StoredObject | undefined;
    const updated = await this.deps.store.transaction(async (tx) => {
      const current = await tx.getObject(type.name, parsed.key);
      before = current;
      if (!current) throw notFound(type.name, parsed.key);
      const merged = { ...current.data, ...values };
      if (current.protection === 'locked' && !onlyTunableChanged(type.name, parsed.key, current.data, merged))
        throw conflict(`${businessKey(type.name, parsed.key)} is built in and cannot be changed`);
      checkRules(type, merged);
      const refs = await resolveReferences(tx, principal, type, merged, current.uniqueId);
      await checkWithOthers(tx, principal, type, parsed.key, merged);
      const next = { ...current, data: merged, modificationTime: this.deps.clock.now() };
      await tx.updateObject(next, refs);
      await auditObjectChange(tx, principal, 'update', { before: current, after: next, time: next.modificationTime });
      return next;
    });
    await this.deps.onChange?.(type.name, before, updated);
    return this.reader.rendered(type, updated);
  }

  /**
   * `PUT <type>/<key>/enable|disable` (alert sources): switches the read-only `Enabled` state
   * with the Control privilege, leaving the definition and its modification time alone. Answers the object.
   */
  async setEnabled(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    enabled: boolean,
  ): Promise<Record<string, unknown>> {
    const parsed = await this.authorizeChange(principal, type, pathKey, 'Control', enabled ? 'enable' : 'disable');
    let before: StoredObject | undefined;
    const after = await this.deps.store.transaction(async (tx) => {
      const current = await tx.getObject(type.name, parsed.key);
      if (!current) throw notFound(type.name, parsed.key);
      before = current;
      const next = { ...current, data: { ...current.data, Enabled: enabled } };
      if (current.data.Enabled !== enabled) {
        await tx.patchObjectData(current.uniqueId, next.data);
        const time = this.deps.clock.now();
        await auditObjectChange(tx, principal, enabled ? 'enable' : 'disable', { before: current, after: next, time });
      }
      return next;
    });
    await this.deps.onChange?.(type.name, before, after);
    return this.reader.rendered(type, after);
  }

  async delete(principal: Principal, type: ObjectType, pathKey: string): Promise<void> {
    const parsed = await this.authorizeChange(principal, type, pathKey, 'Delete', 'delete');
    const deleted = await this.deps.store.transaction(async (tx) => {
      const gone = await deleteStoredObject(tx, type, parsed);
      await auditObjectChange(tx, principal, 'delete', { before: gone, time: this.deps.clock.now() });
      return gone;
    });
    await this.deps.onChange?.(type.name, deleted, undefined);
  }
}
