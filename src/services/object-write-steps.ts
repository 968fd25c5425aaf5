// The steps a create, an update and an import share (identity, secrets, references, cross-object rules, the
// insert and its twin), kept apart so the writer and the importer of definitions (docs/architecture.md §10, §14)
// run the very same checks in the same order.
import { conflict, forbidden, invalid } from '../errors.ts';
import type { Privilege, TypeName } from '../model/fields.ts';
import { businessKey, type ParsedKey, parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { keyShapeOf, requireType } from '../model/registry.ts';
import { collectReferences, validateObjectBody } from '../model/validate.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { can, type Principal } from '../security/privileges.ts';
import { isUniqueViolation, type ObjectRef, type Store, type StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { checkObject, precheckObject } from './object-checks.ts';
import { itemAt } from '../domain/item-at.ts';

export interface ObjectServiceDeps {
  store: Store;
  clock: Clock;
  secrets: SecretBox;
  defaultTimeZone: string;
  /** Webhook targets allowed although internal (SSRF allow-list), checked when an AlertEscalation is stored. */
  webhookAllow: readonly string[];
  /** Told after a commit that changed an object (the engine re-evaluates queues and process servers). */
  onChange?: (
    type: TypeName,
    before: StoredObject | undefined,
    after: StoredObject | undefined,
  ) => Promise<void> | void;
}

/** The server acting for itself (built-in objects, derived objects). */
export const SYSTEM_PRINCIPAL: Principal = {
  user: 'system',
  roles: ['Administrator'],
  grants: [
    { type: '*', partition: '*', privileges: ['View', 'Create', 'Edit', 'Delete', 'Submit', 'Control', 'Reply'] },
  ],
};

/** The partition whose privileges govern a referenced object. */
export const referencePartition = (reference: { type: TypeName; key: string }): string =>
  parseKey(keyShapeOf(reference.type), reference.key)?.partition ?? '';

/**
 * The `Partition` field of a partitioned object is where the object lives, not an object it refers to: the
 * privileges on the object itself (granted per partition) cover it, so it needs no View on the Partition.
 */
export const isOwnPartition = (reference: { path: string; type: string }): boolean =>
  reference.path === 'Partition' && reference.type === 'Partition';

/** The type an object of `type` lives in: a Partition, except for a partition itself (named by its name alone). */
export const partitionOf = (type: ObjectType): 'Partition' | undefined =>
  type.key === 'name' ? undefined : 'Partition';

export const keyForm = (type: ObjectType): string =>
  type.key === 'queueProvider'
    ? '<ps_partition>.<ps_name>.<queue_partition>.<queue_name>'
    : type.key === 'name'
      ? 'a name of letters, digits and _'
      : '<partition>.<name>, names of letters, digits and _';

export function requirePrivilege(
  principal: Principal,
  type: ObjectType,
  partition: string,
  privilege: Privilege,
  what: string,
): void {
  if (!can(principal, type.name, partition, privilege))
    throw forbidden(`You need the ${privilege} privilege to ${what}`);
}

export function validateOptions(deps: ObjectServiceDeps, mode: 'create' | 'update') {
  return { mode, defaultZone: deps.defaultTimeZone, keyShapeOf };
}

/** Identity fields come from the path; a body may repeat them, but only with the same value. */
export function applyIdentity(type: ObjectType, parsed: ParsedKey, values: Record<string, unknown>): void {
  for (const name of type.identity) {
    const fromPath = parsed.identity[name];
    const given = values[name];
    if (given !== undefined && given !== null && given !== fromPath)
      throw invalid(`Field "${name}" must match the key in the path (${fromPath})`);
    if (given !== undefined || fromPath !== undefined) values[name] = fromPath;
  }
}

export function sealSecrets(deps: ObjectServiceDeps, type: ObjectType, values: Record<string, unknown>): void {
  for (const f of type.fields) {
    const value = values[f.name];
    if (f.kind.kind === 'secret' && typeof value === 'string') values[f.name] = deps.secrets.encrypt(value);
  }
}

/** Every reference must name an object that exists and that the caller may view; returns the rows to keep. */
export async function resolveReferences(
  tx: Store,
  principal: Principal,
  type: ObjectType,
  data: Record<string, unknown>,
  selfId: number | undefined,
): Promise<ObjectRef[]> {
  const refs: ObjectRef[] = [];
  for (const r of collectReferences(type.fields, data)) {
    const visible = isOwnPartition(r) || can(principal, r.type, referencePartition(r), 'View');
    const target = visible ? await tx.getObject(r.type, r.key) : undefined;
    if (!target) throw invalid(`Field "${r.path}": ${businessKey(r.type, r.key)} does not exist`);
    if (target.uniqueId !== selfId) refs.push({ path: r.path, toId: target.uniqueId });
  }
  return refs;
}

/** Structure rules that read other objects (a chain's calls and mappings); runs after the references resolved. */
export async function checkWithOthers(
  tx: Store,
  principal: Principal,
  type: ObjectType,
  key: string,
  data: Record<string, unknown>,
): Promise<void> {
  const problem = await checkObject(tx, type.name, key, data, principal);
  if (problem) throw invalid(problem);
}

/** Checks that resolve host names: before the transaction, so no lock is held while DNS answers. */
export async function precheck(
  deps: ObjectServiceDeps,
  type: ObjectType,
  values: Record<string, unknown>,
): Promise<void> {
  const problem = await precheckObject(type.name, values, { webhookAllow: deps.webhookAllow });
  if (problem) throw invalid(problem);
}

/** Inserts a checked new object (references resolved, cross-object rules run) and what its creation implies. */
export async function insertNew(
  deps: ObjectServiceDeps,
  tx: Store,
  principal: Principal,
  type: ObjectType,
  parsed: ParsedKey,
  values: Record<string, unknown>,
): Promise<StoredObject> {
  const refs = await resolveReferences(tx, principal, type, values, undefined);
  await checkWithOthers(tx, principal, type, parsed.key, values);
  const uniqueId = itemAt(await tx.nextUniqueIds(1), 0);
  const now = deps.clock.now();
  const object: StoredObject = {
    uniqueId,
    type: type.name,
    key: parsed.key,
    partition: parsed.partition,
    data: values,
    protection: null,
    creationTime: now,
    modificationTime: now,
  };
  try {
    await tx.insertObject(object, refs);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`Object ${businessKey(type.name, parsed.key)} already exists`);
    throw e;
  }
  await afterCreate(deps, tx, type, object);
  return object;
}

/**
 * A twin the type needs and makes (its `twin.madeWith` trait) is created with it when there is none
 * (docs/architecture.md §3: creating a JobChain creates its JobDefinition, type JobChain, queue GLOBAL.System).
 */
async function afterCreate(deps: ObjectServiceDeps, tx: Store, type: ObjectType, object: StoredObject): Promise<void> {
  const twin = type.traits.twin;
  if (!twin?.madeWith || (await tx.getObject(twin.type, object.key))) return;
  const defType = requireType(twin.type);
  const data = validateObjectBody(defType, twin.madeWith, validateOptions(deps, 'create'));
  Object.assign(data, { Name: object.data.Name, Partition: object.data.Partition });
  const refs = await resolveReferences(tx, SYSTEM_PRINCIPAL, defType, data, undefined);
  const uniqueId = itemAt(await tx.nextUniqueIds(1), 0);
  await tx.insertObject({ ...object, uniqueId, type: twin.type, data }, refs);
}
