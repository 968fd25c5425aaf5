// Reading definitions: one object (through a cache of rendered answers), a page of a type's objects, summaries,
// scripts and library files, each under the View rules of docs/architecture.md §10; apart from writes because a
// read never changes stored state.
import { objectToXml } from '../car/object-xml.ts';
import { forbidden, notFound } from '../errors.ts';
import { loopYielder } from '../loop-yield.ts';
import type { TypeName } from '../model/fields.ts';
import { businessKey, type ParsedKey, parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { definitionTypes } from '../model/registry.ts';
import { renderObject } from '../model/render.ts';
import { collectReferences } from '../model/validate.ts';
import { can, type Principal, partitionsWith } from '../security/privileges.ts';
import { allObjects } from '../store/all-objects.ts';
import type { ObjectSummary, Store, StoredObject } from '../store/store.ts';
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
import { isOwnPartition, type ObjectServiceDeps, referencePartition } from './object-write-steps.ts';

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

/** The query parameters of `GET /<Type>` for every definition type. */
export const OBJECT_LIST_PARAMS: readonly ListParam[] = [
  { name: 'Partition', description: 'Only objects of this partition' },
  { name: 'Search', description: 'Case-insensitive text in the business key or the Description' },
  ...PAGE_PARAMS,
];

/** Rendered objects kept for reads; cleared whole when full (definitions are few and change rarely). */
const READ_CACHE_SIZE = 5000;

/** Fields computed on read from other objects, by `Type.Field`. */
type Deriver = (store: Store, object: StoredObject) => Promise<unknown>;
const DERIVED: Record<string, Deriver> = {
  'ProcessServer.QueueProviders': (store, ps) => store.referrerKeys(ps.uniqueId, 'QueueProvider', 'ProcessServer'),
  'Library.Files': async (store, library) =>
    (await store.blobs.list('library', library.key)).map((b) => ({ Name: b.name, Size: b.size, Sha256: b.sha256 })),
};

export class ObjectReader {
  private readonly deps: ObjectServiceDeps;
  private readonly reads = new Map<string, ReadEntry>();

  constructor(deps: ObjectServiceDeps) {
    this.deps = deps;
  }

  /**
   * The scripts the caller may view (the XML interface's `scripts`): objects of the types with the `script` trait
   * (libraries, definitions whose type runs a script) for which it holds.
   */
  async scripts(principal: Principal): Promise<Array<{ type: TypeName; key: string; description: unknown }>> {
    const found: Array<{ type: TypeName; key: string; description: unknown }> = [];
    const pause = loopYielder(); // thousands of scripts must not hold the event loop (scripts-get, scripts-list)
    for (const type of definitionTypes())
      for await (const o of type.traits.script ? allObjects(this.deps.store, type.name) : []) {
        await pause();
        if (!can(principal, type.name, o.partition, 'View') || o.protection !== null) continue;
        if (type.traits.script?.(o.data)) found.push({ type: type.name, key: o.key, description: o.data.Description });
      }
    return found;
  }

  /**
   * The object's JSON text, read through a cache of rendered objects: the hot path of the JSON interface sends
   * it as is. An entry is valid while the store's data version is unchanged, so a read never returns data older
   * than the last committed write; privileges are checked on every call, cached or not.
   */
  async getText(principal: Principal, type: ObjectType, pathKey: string): Promise<string> {
    return (await this.readEntry(principal, type, pathKey)).text;
  }

  /** The object as the XML interface's `object` answers it, read through the same cache and privileges as getText. */
  async getXml(principal: Principal, type: ObjectType, pathKey: string): Promise<string> {
    const entry = await this.readEntry(principal, type, pathKey);
    entry.xml ??= objectToXml(type, entry.stored);
    return entry.xml;
  }

  private async readEntry(principal: Principal, type: ObjectType, pathKey: string): Promise<ReadEntry> {
    const parsed = parseKey(type.key, pathKey);
    if (!parsed || !can(principal, type.name, parsed.partition, 'View'))
      throw notFound(type.name, parsed?.key ?? pathKey);
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
      if (!can(principal, r.type, r.partition, 'View'))
        throw forbidden(`You need the View privilege on the referenced object ${businessKey(r.type, r.key)}`);
    return entry;
  }

  /**
   * `GET /<Type>`: the objects of a definition type the caller may view (View in their partition, filtered in
   * SQL), in business-key order, a page at a time after the cursor; each as GET of one renders it.
   */
  async list(principal: Principal, type: ObjectType, query: unknown): Promise<ListAnswer> {
    const values = readParams(query, OBJECT_LIST_PARAMS);
    const page = readPage(values, 'k');
    const search = searchValue(values);
    const partition = partitionValue(values);
    const objects = await this.listStored(principal, type, {
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
    principal: Principal,
    type: ObjectType,
    options: { partition?: string; search?: string; afterKey?: string; limit: number },
  ): Promise<StoredObject[]> {
    const { partition, ...rest } = options;
    const partitions = partitionsToRead(partitionsWith(principal, type.name, ['View']), partition);
    return this.deps.store.listObjects(type.name, { ...rest, ...(partitions !== undefined ? { partitions } : {}) });
  }

  /**
   * What the XML list shows of every object of `type` the caller may view, in key order, a page at a time: narrow
   * rows (key, partition, protection, Description), since parsing each object's whole data only for its
   * description was most of a list's cost.
   */
  async *visibleSummaries(principal: Principal, type: ObjectType): AsyncGenerator<ObjectSummary[]> {
    const partitions = partitionsWith(principal, type.name, ['View']);
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
    principal: Principal,
    type: ObjectType,
    pathKey: string,
  ): Promise<{ object: StoredObject; data: Record<string, unknown> }> {
    const { object } = await this.find(principal, type, pathKey);
    const data = await this.withDerived(type, object);
    for (const r of collectReferences(type.fields, data))
      if (!isOwnPartition(r) && !can(principal, r.type, referencePartition(r), 'View'))
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
   * The files owned by objects the caller may view (types with the `files` trait: libraries), named
   * `<owner key>/<file>`: the XML interface's api-libs.
   */
  async ownedFiles(principal: Principal): Promise<Array<{ name: string; data: Buffer }>> {
    const entries: Array<{ name: string; data: Buffer }> = [];
    for (const type of definitionTypes()) {
      const kind = type.traits.files;
      if (!kind) continue;
      for (const f of await this.deps.store.blobs.list(kind)) {
        const partition = parseKey(type.key, f.owner)?.partition ?? '';
        if (!can(principal, type.name, partition, 'View')) continue;
        const data = await this.deps.store.blobs.get(kind, f.owner, f.name);
        if (data) entries.push({ name: `${f.owner}/${f.name}`, data });
      }
    }
    return entries;
  }

  /** Parses the key and reads the object; 404 when it is malformed, missing or not visible. */
  async find(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
  ): Promise<{ parsed: ParsedKey; object: StoredObject }> {
    const parsed = parseKey(type.key, pathKey);
    if (!parsed || !can(principal, type.name, parsed.partition, 'View'))
      throw notFound(type.name, parsed?.key ?? pathKey);
    const object = await this.deps.store.getObject(type.name, parsed.key);
    if (!object) throw notFound(type.name, parsed.key);
    return { parsed, object };
  }

  /** The object as the JSON interface answers it, its derived fields computed. */
  async rendered(type: ObjectType, object: StoredObject): Promise<Record<string, unknown>> {
    return this.render(type, object, await this.withDerived(type, object));
  }

  private async withDerived(type: ObjectType, object: StoredObject): Promise<Record<string, unknown>> {
    const derivedFields = type.fields.filter((f) => f.derived);
    if (derivedFields.length === 0) return object.data;
    const data = { ...object.data };
    for (const f of derivedFields) data[f.name] = await DERIVED[`${type.name}.${f.name}`]?.(this.deps.store, object);
    return data;
  }

  private render(type: ObjectType, object: StoredObject, data: Record<string, unknown>): Record<string, unknown> {
    const zone = this.deps.defaultTimeZone;
    return renderObject(
      type,
      { uniqueId: object.uniqueId, businessKey: businessKey(type.name, object.key) },
      {
        ...data,
        CreationTime: { ms: object.creationTime, zone },
        LastModificationTime: { ms: object.modificationTime, zone },
      },
    );
  }
}
