import { isDeepStrictEqual } from 'node:util';
import { objectToXml } from '../car/object-xml.ts';
import { conflict, forbidden, invalid, MillraceError, notFound } from '../errors.ts';
import { loopYielder } from '../loop-yield.ts';
import type { Privilege, TypeName } from '../model/fields.ts';
import { businessKey, type ParsedKey, parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { definitionTypes, getType, keyShapeOf, requireType } from '../model/registry.ts';
import { renderObject } from '../model/render.ts';
import { dropServerOwned, namesServerOwned } from '../model/round-trip.ts';
import { checkRules, collectReferences, validateObjectBody } from '../model/validate.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { can, type Principal, partitionsWith } from '../security/privileges.ts';
import { allObjects } from '../store/all-objects.ts';
import {
  isUniqueViolation,
  type ObjectRef,
  type ObjectSummary,
  type Store,
  type StoredObject,
} from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { onlyTunableChanged } from './builtin-tunable.ts';
import { selectFields } from './job-render.ts';
import {
  encodeCursor,
  type ListAnswer,
  type ListParam,
  PAGE_PARAMS,
  partitionsToRead,
  partitionValue,
  readPage,
  readParams,
  searchValue,
} from './list-query.ts';
import { checkObject, precheckObject } from './object-checks.ts';

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

/** Jobs, history included, keep these objects referenced: a queue can be deleted only when no job names it. */
const JOB_COLUMN: Partial<Record<TypeName, 'definition' | 'queue' | 'processServer'>> = {
  JobDefinition: 'definition',
  Queue: 'queue',
  ProcessServer: 'processServer',
};

/** A rendered object, serialised, and the references whose View privilege a reader needs. */
interface ReadEntry {
  version: string | undefined;
  refs: Array<{ type: TypeName; key: string; partition: string }>;
  /** The JSON interface's answer. */
  text: string;
  /** The XML interface's answer (`object`), written on its first read. */
  xml?: string;
  /** The stored form the XML is written from (derived fields and times included). */
  stored: Record<string, unknown>;
}

/** What an import did to one object; `before`/`after` are told to the engine after the commit. */
export interface ImportOutcome {
  outcome: 'created' | 'changed' | 'unchanged' | 'kept';
  before?: StoredObject;
  after: StoredObject;
}

/** The query parameters of `GET /<Type>` for every definition type. */
export const OBJECT_LIST_PARAMS: readonly ListParam[] = [
  { name: 'Partition', description: 'Only objects of this partition' },
  { name: 'Search', description: 'Case-insensitive text in the business key or the Description' },
  ...PAGE_PARAMS,
];

/** Rendered objects kept for reads; cleared whole when full (definitions are few and change rarely). */
const READ_CACHE_SIZE = 5000;
/** Rendered lists kept (cachedList), the least recently used dropped first beyond either bound. */
const LIST_CACHE_ENTRIES = 16;
const LIST_CACHE_BYTES = 32 * 1024 * 1024;

/** The partition whose privileges govern a referenced object. */
const referencePartition = (r: { type: TypeName; key: string }): string =>
  parseKey(keyShapeOf(r.type), r.key)?.partition ?? '';

/** Fields computed on read from other objects, by `Type.Field`. */
type Deriver = (store: Store, object: StoredObject) => Promise<unknown>;
const DERIVED: Record<string, Deriver> = {
  'ProcessServer.QueueProviders': (store, ps) => store.referrerKeys(ps.uniqueId, 'QueueProvider', 'ProcessServer'),
  'Library.Files': async (store, library) =>
    (await store.blobs.list('library', library.key)).map((b) => ({ Name: b.name, Size: b.size, Sha256: b.sha256 })),
};

/**
 * xml-put names its object in the body: before the body is read, only the right to store some object can be checked
 * (Create or Edit on a definition type in some partition, else 403); `ObjectService.put` then checks the object's own.
 */
export function authorizeStore(p: Principal): void {
  const storable = (type: string) => type === '*' || getType(type)?.storage === 'definition';
  const holds = p.grants.some(
    (g) => storable(g.type) && (g.privileges.includes('Create') || g.privileges.includes('Edit')),
  );
  if (!holds) throw forbidden('You need the Create or Edit privilege on an object type to store objects');
}

/**
 * Create, read, update and delete for every definition type of the registry, with the privilege rules of
 * docs/architecture.md §10: no View → 404 exactly as for a missing object; View but not the operation's privilege → 403;
 * GET also needs View on every object referred to, else 403 naming it.
 */
export class ObjectService {
  private readonly deps: ObjectServiceDeps;
  private readonly reads = new Map<string, ReadEntry>();
  private readonly lists = new Map<string, { version: string; text: Buffer }>();
  private listBytes = 0;

  constructor(deps: ObjectServiceDeps) {
    this.deps = deps;
  }

  /**
   * The scripts the caller may view (the XML interface's `scripts`): objects of the types with the `script` trait
   * (libraries, definitions whose type runs a script) for which it holds.
   */
  async scripts(p: Principal): Promise<Array<{ type: TypeName; key: string; description: unknown }>> {
    const found: Array<{ type: TypeName; key: string; description: unknown }> = [];
    const pause = loopYielder(); // thousands of scripts must not hold the event loop (scripts-get, scripts-list)
    for (const type of definitionTypes())
      for await (const o of type.traits.script ? allObjects(this.deps.store, type.name) : []) {
        await pause();
        if (!can(p, type.name, o.partition, 'View') || o.protection !== null) continue;
        if (type.traits.script?.(o.data)) found.push({ type: type.name, key: o.key, description: o.data.Description });
      }
    return found;
  }

  /**
   * The object's JSON text, read through a cache of rendered objects: the hot path of the JSON interface sends
   * it as is. An entry is valid while the store's data version is unchanged, so a read never returns data older
   * than the last committed write; privileges are checked on every call, cached or not.
   */
  async getText(p: Principal, type: ObjectType, pathKey: string): Promise<string> {
    return (await this.readEntry(p, type, pathKey)).text;
  }

  /** The object as the XML interface's `object` answers it, read through the same cache and privileges as getText. */
  async getXml(p: Principal, type: ObjectType, pathKey: string): Promise<string> {
    const entry = await this.readEntry(p, type, pathKey);
    entry.xml ??= objectToXml(type, entry.stored);
    return entry.xml;
  }

  private async readEntry(p: Principal, type: ObjectType, pathKey: string): Promise<ReadEntry> {
    const parsed = parseKey(type.key, pathKey);
    if (!parsed || !can(p, type.name, parsed.partition, 'View')) throw notFound(type.name, parsed?.key ?? pathKey);
    const version = this.deps.store.dataVersion(); // read before the data it validates
    const cacheKey = `${type.name}:${parsed.key}`;
    let entry = version === undefined ? undefined : this.reads.get(cacheKey);
    if (!entry || entry.version !== version) {
      const object = await this.deps.store.getObject(type.name, parsed.key);
      if (!object) throw notFound(type.name, parsed.key);
      const data = await this.withDerived(type, object);
      const refs = collectReferences(type.fields, data)
        .filter((r) => !isOwnPartition(r))
        .map((r) => ({ type: r.type, key: r.key, partition: referencePartition(r) }));
      const zone = this.deps.defaultTimeZone;
      const stored = {
        ...data,
        CreationTime: { ms: object.creationTime, zone },
        LastModificationTime: { ms: object.modificationTime, zone },
      };
      entry = { version, refs, text: JSON.stringify(this.render(type, object, data)), stored };
      if (version !== undefined) {
        if (this.reads.size >= READ_CACHE_SIZE) this.reads.clear();
        this.reads.set(cacheKey, entry);
      }
    }
    for (const r of entry.refs)
      if (!can(p, r.type, r.partition, 'View'))
        throw forbidden(`You need the View privilege on the referenced object ${businessKey(r.type, r.key)}`);
    return entry;
  }

  /**
   * `GET /<Type>`: the objects of a definition type the caller may view (View in their partition, filtered in
   * SQL), in business-key order, a page at a time after the cursor; each as GET of one renders it.
   */
  async list(p: Principal, type: ObjectType, query: unknown): Promise<ListAnswer> {
    const values = readParams(query, OBJECT_LIST_PARAMS);
    const page = readPage(values, 'k');
    const search = searchValue(values);
    const partition = partitionValue(values);
    const objects = await this.listStored(p, type, {
      ...(partition !== undefined ? { partition } : {}),
      ...(search !== undefined ? { search } : {}),
      ...(page.after !== undefined ? { afterKey: page.after } : {}),
      limit: page.limit + 1,
    });
    const shown = objects.slice(0, page.limit);
    const items = [];
    for (const o of shown) items.push(selectFields(this.render(type, o, await this.withDerived(type, o)), page.fields));
    const last = shown[shown.length - 1];
    return { items, next: objects.length > page.limit && last ? encodeCursor('k', last.key) : null };
  }

  /** The stored objects of `type` the caller may view, in key order (`list` and `allVisible`). */
  private listStored(
    p: Principal,
    type: ObjectType,
    options: { partition?: string; search?: string; afterKey?: string; limit: number },
  ): Promise<StoredObject[]> {
    const { partition, ...rest } = options;
    const partitions = partitionsToRead(partitionsWith(p, type.name, ['View']), partition);
    return this.deps.store.listObjects(type.name, { ...rest, ...(partitions !== undefined ? { partitions } : {}) });
  }

  /**
   * What the XML list shows of every object of `type` the caller may view, in key order, a page at a time: narrow
   * rows (key, partition, protection, Description), since parsing each object's whole data only for its
   * description was most of a list's cost.
   */
  /**
   * A rendered list of a type's objects (the XML interface's `list`), kept until an object changes: consoles and
   * scripts ask for the same list again and again, and writing one of many objects costs much CPU
   * (bench/README.md, B8). Its key is what decides its content: the type, the partitions the caller may view, and
   * `variant` (the caller's query). Validated by the store's data version, as the object read cache; off where the
   * store has none (PostgreSQL).
   */
  async cachedList(p: Principal, type: ObjectType, variant: string, build: () => Promise<Buffer>): Promise<Buffer> {
    const version = this.deps.store.dataVersion(); // read before the data it validates
    if (version === undefined) return build();
    const partitions = partitionsWith(p, type.name, ['View']);
    const key = `${type.name}\0${partitions ? [...partitions].sort().join(',') : '*'}\0${variant}`;
    const hit = this.lists.get(key);
    this.dropList(key);
    if (hit?.version === version) {
      this.keepList(key, hit);
      return hit.text;
    }
    const text = await build();
    this.keepList(key, { version, text });
    return text;
  }

  private keepList(key: string, entry: { version: string; text: Buffer }): void {
    this.lists.set(key, entry);
    this.listBytes += entry.text.length;
    for (const old of this.lists.keys()) {
      if (this.lists.size <= LIST_CACHE_ENTRIES && this.listBytes <= LIST_CACHE_BYTES) break;
      this.dropList(old);
    }
  }

  private dropList(key: string): void {
    const entry = this.lists.get(key);
    if (!entry) return;
    this.lists.delete(key);
    this.listBytes -= entry.text.length;
  }

  async *visibleSummaries(p: Principal, type: ObjectType): AsyncGenerator<ObjectSummary[]> {
    const partitions = partitionsWith(p, type.name, ['View']);
    let afterKey: string | undefined;
    for (;;) {
      const page = await this.deps.store.listObjectSummaries(type.name, {
        limit: 1000,
        ...(partitions !== undefined ? { partitions } : {}),
        ...(afterKey !== undefined ? { afterKey } : {}),
      });
      yield page;
      if (page.length < 1000) return;
      afterKey = page[page.length - 1]?.key;
    }
  }

  /**
   * The stored object with its derived fields and times, for the XML interface and CAR export: the same
   * privilege rules as `getText` (404 unless viewable; 403 naming a referenced object the caller cannot view).
   */
  async read(
    p: Principal,
    type: ObjectType,
    pathKey: string,
  ): Promise<{ object: StoredObject; data: Record<string, unknown> }> {
    const { object } = await this.find(p, type, pathKey);
    const data = await this.withDerived(type, object);
    for (const r of collectReferences(type.fields, data))
      if (!isOwnPartition(r) && !can(p, r.type, referencePartition(r), 'View'))
        throw forbidden(`You need the View privilege on the referenced object ${businessKey(r.type, r.key)}`);
    const zone = this.deps.defaultTimeZone;
    return {
      object,
      data: {
        ...data,
        CreationTime: { ms: object.creationTime, zone },
        LastModificationTime: { ms: object.modificationTime, zone },
      },
    };
  }

  /**
   * The checks of a create that need no body (docs/architecture.md §10): the key, View on its partition (else 404),
   * Create (else 403). The JSON interface runs them before it reads the body, and `create` again.
   */
  authorizeCreate(p: Principal, type: ObjectType, pathKey: string): ParsedKey {
    const parsed = parseKey(type.key, pathKey);
    if (!parsed) throw invalid(`"${pathKey}" is not a ${type.name} key: ${keyForm(type)}`);
    if (!can(p, type.name, parsed.partition, 'View')) throw notFound(partitionOf(type) ?? type.name, parsed.partition);
    this.require(p, type, parsed.partition, 'Create', `create a ${type.name} in partition ${parsed.partition}`);
    return parsed;
  }

  /**
   * The checks of a change, a deletion or a switch that need no body: the object exists and the caller may view
   * it (else 404), and holds `privilege` (else 403). Run before the body is read, and again by the operation.
   */
  async authorizeChange(
    p: Principal,
    type: ObjectType,
    pathKey: string,
    privilege: 'Edit' | 'Delete' | 'Control',
    what: string,
  ): Promise<ParsedKey> {
    const { parsed } = await this.find(p, type, pathKey);
    this.require(p, type, parsed.partition, privilege, `${what} ${businessKey(type.name, parsed.key)}`);
    return parsed;
  }

  async create(p: Principal, type: ObjectType, pathKey: string, body: unknown): Promise<Record<string, unknown>> {
    const parsed = this.authorizeCreate(p, type, pathKey);
    const partitionType = partitionOf(type);
    const given = dropServerOwned(type, body ?? {}, undefined, businessKey(type.name, parsed.key));
    const values = validateObjectBody(type, given, this.validateOptions('create'));
    this.applyIdentity(type, parsed, values);
    checkRules(type, values);
    await this.precheck(type, values);
    this.sealSecrets(type, values);
    const created = await this.deps.store.transaction(async (tx) => {
      if (partitionType && !(await tx.getObject('Partition', parsed.partition)))
        throw notFound('Partition', parsed.partition);
      if (await tx.getObject(type.name, parsed.key))
        throw conflict(`Object ${businessKey(type.name, parsed.key)} already exists`);
      return this.insertNew(tx, p, type, parsed, values);
    });
    await this.deps.onChange?.(type.name, undefined, created);
    const data = await this.withDerived(type, created);
    return this.render(type, created, data);
  }

  /**
   * xml-put: creates the object, or changes it when it exists. A create refused because another request created
   * the object meanwhile becomes the change it now is.
   */
  async put(
    p: Principal,
    type: ObjectType,
    pathKey: string,
    body: unknown,
  ): Promise<{ saved: Record<string, unknown>; created: boolean }> {
    const parsed = parseKey(type.key, pathKey);
    const exists = async () =>
      parsed !== undefined && (await this.deps.store.getObject(type.name, parsed.key)) !== undefined;
    if (await exists()) return { saved: await this.update(p, type, pathKey, body), created: false };
    try {
      return { saved: await this.create(p, type, pathKey, body), created: true };
    } catch (e) {
      if (e instanceof MillraceError && e.status === 409 && (await exists()))
        return { saved: await this.update(p, type, pathKey, body), created: false };
      throw e;
    }
  }

  /**
   * The files owned by objects the caller may view (types with the `files` trait: libraries), named
   * `<owner key>/<file>`: the XML interface's api-libs.
   */
  async ownedFiles(p: Principal): Promise<Array<{ name: string; data: Buffer }>> {
    const entries: Array<{ name: string; data: Buffer }> = [];
    for (const type of definitionTypes()) {
      const kind = type.traits.files;
      if (!kind) continue;
      for (const f of await this.deps.store.blobs.list(kind)) {
        const partition = parseKey(type.key, f.owner)?.partition ?? '';
        if (!can(p, type.name, partition, 'View')) continue;
        const data = await this.deps.store.blobs.get(kind, f.owner, f.name);
        if (data) entries.push({ name: `${f.owner}/${f.name}`, data });
      }
    }
    return entries;
  }

  async update(p: Principal, type: ObjectType, pathKey: string, body: unknown): Promise<Record<string, unknown>> {
    const parsed = await this.authorizeChange(p, type, pathKey, 'Edit', 'change');
    // A body copied from GET: its server-owned fields must be as they are now (else someone changed the object).
    const current = namesServerOwned(type, body) ? JSON.parse(await this.getText(p, type, pathKey)) : undefined;
    const given = dropServerOwned(type, body ?? {}, current, businessKey(type.name, parsed.key));
    const values = validateObjectBody(type, given, this.validateOptions('update'));
    this.applyIdentity(type, parsed, values);
    await this.precheck(type, values);
    this.sealSecrets(type, values);
    let before: StoredObject | undefined;
    const updated = await this.deps.store.transaction(async (tx) => {
      const current = await tx.getObject(type.name, parsed.key);
      before = current;
      if (!current) throw notFound(type.name, parsed.key);
      const merged = { ...current.data, ...values };
      if (current.protection === 'locked' && !onlyTunableChanged(type.name, parsed.key, current.data, merged))
        throw conflict(`${businessKey(type.name, parsed.key)} is built in and cannot be changed`);
      checkRules(type, merged);
      const refs = await this.resolveReferences(tx, p, type, merged, current.uniqueId);
      await this.checkWithOthers(tx, p, type, parsed.key, merged);
      const next = { ...current, data: merged, modificationTime: this.deps.clock.now() };
      await tx.updateObject(next, refs);
      return next;
    });
    await this.deps.onChange?.(type.name, before, updated);
    return this.render(type, updated, await this.withDerived(type, updated));
  }

  /**
   * `PUT <type>/<key>/enable|disable` (alert sources): switches the read-only `Enabled` state
   * with the Control privilege, leaving the definition and its modification time alone. Answers the object.
   */
  async setEnabled(
    p: Principal,
    type: ObjectType,
    pathKey: string,
    enabled: boolean,
  ): Promise<Record<string, unknown>> {
    const parsed = await this.authorizeChange(p, type, pathKey, 'Control', enabled ? 'enable' : 'disable');
    let before: StoredObject | undefined;
    const after = await this.deps.store.transaction(async (tx) => {
      const current = await tx.getObject(type.name, parsed.key);
      if (!current) throw notFound(type.name, parsed.key);
      before = current;
      const next = { ...current, data: { ...current.data, Enabled: enabled } };
      if (current.data.Enabled !== enabled) await tx.patchObjectData(current.uniqueId, next.data);
      return next;
    });
    await this.deps.onChange?.(type.name, before, after);
    return this.render(type, after, await this.withDerived(type, after));
  }

  async delete(p: Principal, type: ObjectType, pathKey: string): Promise<void> {
    const parsed = await this.authorizeChange(p, type, pathKey, 'Delete', 'delete');
    const deleted = await this.deps.store.transaction(async (tx) => {
      const current = await tx.getObject(type.name, parsed.key);
      if (!current) throw notFound(type.name, parsed.key);
      if (current.protection !== null)
        throw conflict(`${businessKey(type.name, parsed.key)} is built in and cannot be deleted`);
      const referrer = await tx.findReferrer(current.uniqueId);
      if (referrer)
        throw conflict(
          `${businessKey(type.name, parsed.key)} is still referenced by ${businessKey(referrer.type, referrer.key)} (field ${referrer.path})`,
        );
      const column = JOB_COLUMN[type.name];
      const job = column ? await tx.jobs.anyReferring(column, parsed.key) : undefined;
      if (job !== undefined) throw conflict(`${businessKey(type.name, parsed.key)} is still referenced by Job:${job}`);
      if (type.traits.owns === 'Event') await deleteEvents(tx, parsed.key);
      if (type.traits.files) await tx.blobs.delete(type.traits.files, parsed.key);
      await tx.deleteObject(current.uniqueId);
      return current;
    });
    await this.deps.onChange?.(type.name, deleted, undefined);
  }

  /**
   * Writes one object of an import (docs/architecture.md §14) inside the import's transaction: the archive's object replaces
   * the stored one field by field (fields the archive does not carry, such as passwords and run-time state, are
   * kept). Needs Create for a new object and Edit for an existing one. Built-in locked objects are kept as they
   * are. `body` is the JSON-input form (from the object XML); `precheckImport` ran on it before the transaction.
   */
  async importObject(
    tx: Store,
    p: Principal,
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
      if (!can(p, type.name, parsed.partition, 'Create'))
        throw forbidden(`You need the Create privilege to create ${what}`);
      if (partitionType && !(await tx.getObject('Partition', parsed.partition)))
        throw invalid(`Partition ${parsed.partition} does not exist`);
      return { outcome: 'created', after: await this.insertNew(tx, p, type, parsed, values) };
    }
    // Read-only state (a process server's status, an alert source's Enabled) and secrets stay as they are.
    const merged = { ...current.data };
    for (const f of type.fields)
      if (!f.readOnly && !f.derived && f.kind.kind !== 'secret' && f.name in values) merged[f.name] = values[f.name];
    if (isDeepStrictEqual(merged, current.data)) return { outcome: 'unchanged', before: current, after: current };
    if (current.protection === 'locked') return { outcome: 'kept', before: current, after: current };
    if (!can(p, type.name, parsed.partition, 'View') || !can(p, type.name, parsed.partition, 'Edit'))
      throw forbidden(`You need the Edit privilege to change ${what}`);
    const refs = await this.resolveReferences(tx, p, type, merged, current.uniqueId);
    await this.checkWithOthers(tx, p, type, parsed.key, merged);
    const next = { ...current, data: merged, modificationTime: this.deps.clock.now() };
    await tx.updateObject(next, refs);
    return { outcome: 'changed', before: current, after: next };
  }

  /** Inserts a checked new object (references resolved, cross-object rules run) and what its creation implies. */
  private async insertNew(
    tx: Store,
    p: Principal,
    type: ObjectType,
    parsed: ParsedKey,
    values: Record<string, unknown>,
  ): Promise<StoredObject> {
    const refs = await this.resolveReferences(tx, p, type, values, undefined);
    await this.checkWithOthers(tx, p, type, parsed.key, values);
    const [uniqueId] = await tx.nextUniqueIds(1);
    const now = this.deps.clock.now();
    const object: StoredObject = {
      uniqueId: uniqueId as number,
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
    await this.afterCreate(tx, type, object);
    return object;
  }

  /** The checks of an imported object that need no database: fields, cross-field rules, host names (DNS). */
  async precheckImport(type: ObjectType, key: string, body: Record<string, unknown>): Promise<void> {
    const parsed = parseKey(type.key, key);
    if (!parsed) throw invalid(`"${key}" is not a ${type.name} key: ${keyForm(type)}`);
    await this.precheck(type, this.importValues(type, parsed, body));
  }

  /** Tells the engine what an import changed, after its commit (as create and update do for theirs). */
  async importCommitted(type: ObjectType, result: ImportOutcome): Promise<void> {
    if (result.outcome === 'created' || result.outcome === 'changed')
      await this.deps.onChange?.(type.name, result.before, result.after);
  }

  private importValues(type: ObjectType, parsed: ParsedKey, body: Record<string, unknown>): Record<string, unknown> {
    const values = validateObjectBody(type, body, this.validateOptions('create'));
    this.applyIdentity(type, parsed, values);
    checkRules(type, values);
    this.sealSecrets(type, values);
    return values;
  }

  /** Parses the key and reads the object; 404 when it is malformed, missing or not visible. */
  private async find(
    p: Principal,
    type: ObjectType,
    pathKey: string,
  ): Promise<{ parsed: ParsedKey; object: StoredObject }> {
    const parsed = parseKey(type.key, pathKey);
    if (!parsed || !can(p, type.name, parsed.partition, 'View')) throw notFound(type.name, parsed?.key ?? pathKey);
    const object = await this.deps.store.getObject(type.name, parsed.key);
    if (!object) throw notFound(type.name, parsed.key);
    return { parsed, object };
  }

  private require(p: Principal, type: ObjectType, partition: string, privilege: Privilege, what: string): void {
    if (!can(p, type.name, partition, privilege)) throw forbidden(`You need the ${privilege} privilege to ${what}`);
  }

  private validateOptions(mode: 'create' | 'update') {
    return { mode, defaultZone: this.deps.defaultTimeZone, keyShapeOf };
  }

  /** Identity fields come from the path; a body may repeat them, but only with the same value. */
  private applyIdentity(type: ObjectType, parsed: ParsedKey, values: Record<string, unknown>): void {
    for (const name of type.identity) {
      const fromPath = parsed.identity[name];
      const given = values[name];
      if (given !== undefined && given !== null && given !== fromPath)
        throw invalid(`Field "${name}" must match the key in the path (${fromPath})`);
      if (given !== undefined || fromPath !== undefined) values[name] = fromPath;
    }
  }

  private sealSecrets(type: ObjectType, values: Record<string, unknown>): void {
    for (const f of type.fields)
      if (f.kind.kind === 'secret' && typeof values[f.name] === 'string')
        values[f.name] = this.deps.secrets.encrypt(values[f.name] as string);
  }

  /** Every reference must name an object that exists and that the caller may view; returns the rows to keep. */
  private async resolveReferences(
    tx: Store,
    p: Principal,
    type: ObjectType,
    data: Record<string, unknown>,
    selfId: number | undefined,
  ): Promise<ObjectRef[]> {
    const refs: ObjectRef[] = [];
    for (const r of collectReferences(type.fields, data)) {
      const visible = isOwnPartition(r) || can(p, r.type, referencePartition(r), 'View');
      const target = visible ? await tx.getObject(r.type, r.key) : undefined;
      if (!target) throw invalid(`Field "${r.path}": ${businessKey(r.type, r.key)} does not exist`);
      if (target.uniqueId !== selfId) refs.push({ path: r.path, toId: target.uniqueId });
    }
    return refs;
  }

  /** Structure rules that read other objects (a chain's calls and mappings); runs after the references resolved. */
  private async checkWithOthers(
    tx: Store,
    p: Principal,
    type: ObjectType,
    key: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    const problem = await checkObject(tx, type.name, key, data, p);
    if (problem) throw invalid(problem);
  }

  /** Checks that resolve host names: before the transaction, so no lock is held while DNS answers. */
  private async precheck(type: ObjectType, values: Record<string, unknown>): Promise<void> {
    const problem = await precheckObject(type.name, values, { webhookAllow: this.deps.webhookAllow });
    if (problem) throw invalid(problem);
  }

  private async withDerived(type: ObjectType, object: StoredObject): Promise<Record<string, unknown>> {
    const derivedFields = type.fields.filter((f) => f.derived);
    if (derivedFields.length === 0) return object.data;
    const data = { ...object.data };
    for (const f of derivedFields) data[f.name] = await DERIVED[`${type.name}.${f.name}`]?.(this.deps.store, object);
    return data;
  }

  /**
   * A twin the type needs and makes (its `twin.madeWith` trait) is created with it when there is none
   * (docs/architecture.md §3: creating a JobChain creates its JobDefinition, type JobChain, queue GLOBAL.System).
   */
  private async afterCreate(tx: Store, type: ObjectType, object: StoredObject): Promise<void> {
    const twin = type.traits.twin;
    if (!twin?.madeWith || (await tx.getObject(twin.type, object.key))) return;
    const defType = requireType(twin.type);
    const data = validateObjectBody(defType, twin.madeWith, this.validateOptions('create'));
    Object.assign(data, { Name: object.data.Name, Partition: object.data.Partition });
    const refs = await this.resolveReferences(tx, SYSTEM_PRINCIPAL, defType, data, undefined);
    const [uniqueId] = await tx.nextUniqueIds(1);
    await tx.insertObject({ ...object, uniqueId: uniqueId as number, type: twin.type, data }, refs);
  }

  private render(type: ObjectType, object: StoredObject, data: Record<string, unknown>): Record<string, unknown> {
    const zone = this.deps.defaultTimeZone;
    return renderObject(
      type,
      { uniqueId: object.uniqueId, businessKey: businessKey(type.name as TypeName, object.key) },
      {
        ...data,
        CreationTime: { ms: object.creationTime, zone },
        LastModificationTime: { ms: object.modificationTime, zone },
      },
    );
  }
}

/**
 * An event definition goes with its Cleared history, but not while an event of it is Raised or Pending (jobs may
 * wait for it). The engine's lock keeps a raise from slipping in between the check and the delete (PostgreSQL).
 */
async function deleteEvents(tx: Store, definition: string): Promise<void> {
  await tx.jobs.lockDispatch();
  const live = await tx.events.anyLive(definition);
  if (live)
    throw conflict(
      `${businessKey('EventDefinition', definition)} still has the ${live.status} event ${businessKey('Event', live.eventId)}; clear it first`,
    );
  await tx.events.deleteOfDefinition(definition);
}

/**
 * The `Partition` field of a partitioned object is where the object lives, not an object it refers to: the
 * privileges on the object itself (granted per partition) cover it, so it needs no View on the Partition.
 */
const isOwnPartition = (r: { path: string; type: string }): boolean => r.path === 'Partition' && r.type === 'Partition';

/** The type an object of `type` lives in: a Partition, except for a partition itself (named by its name alone). */
const partitionOf = (type: ObjectType): 'Partition' | undefined => (type.key === 'name' ? undefined : 'Partition');

/** The server acting for itself (built-in objects, derived objects). */
export const SYSTEM_PRINCIPAL: Principal = {
  user: 'system',
  roles: ['Administrator'],
  grants: [
    { type: '*', partition: '*', privileges: ['View', 'Create', 'Edit', 'Delete', 'Submit', 'Control', 'Reply'] },
  ],
};

const keyForm = (type: ObjectType): string =>
  type.key === 'queueProvider'
    ? '<ps_partition>.<ps_name>.<queue_partition>.<queue_name>'
    : type.key === 'name'
      ? 'a name of letters, digits and _'
      : '<partition>.<name>, names of letters, digits and _';
