import { hostname } from 'node:os';
import { type CarSource, carChunks, type PackedEntry, packEntry } from '../car/archive-writer.ts';
import { EXPORT_INFO, exportInfoXml, libraryEntryName, objectEntryName } from '../car/layout.ts';
import { objectToXml } from '../car/object-xml.ts';
import type { TypeName } from '../model/fields.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import { getType, requireType } from '../model/registry.ts';
import { collectReferences } from '../model/validate.ts';
import type { Principal } from '../security/privileges.ts';
import { loopYielder } from '../loop-yield.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import type { ObjectService } from './objects.ts';
import { itemAt } from '../domain/item-at.ts';

export interface CarExportDeps {
  store: Store;
  objects: ObjectService;
  /** `source-address` of export-info.xml: where this server is reached. */
  sourceAddress: string;
  /** Deflated object XML kept while an export is planned, in bytes (PACKED_BUDGET; tests set 0). */
  packedBudget?: number;
}

/** Deflated object XML kept between finding the objects and writing them in name order, in bytes. */
const PACKED_BUDGET = 32 * 1024 * 1024;

/**
 * Writes CAR archives (docs/architecture.md §14): the object XML of each object, its library files, and export-info.xml, with
 * the same privilege rules as reading the objects. The bytes depend only on the objects and the user: entries are
 * sorted, timestamps fixed, and export-info's date is the newest modification time among the objects.
 */
export class CarExporter {
  private readonly deps: CarExportDeps;

  constructor(deps: CarExportDeps) {
    this.deps = deps;
  }

  /** The objects named; with `references`, also every object they refer to, and theirs in turn. */
  async exportMany(
    principal: Principal,
    roots: ReadonlyArray<{ type: TypeName; key: string }>,
    options: { references: boolean },
  ): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of await this.exportStream(principal, roots, options)) parts.push(part);
    return Buffer.concat(parts);
  }

  /**
   * exportMany's bytes a piece at a time, for an answer sent while it is written (an export held whole grew the
   * server's memory with its size; bench/README.md). Every object is read once to find the set and check the
   * caller's privileges, so that any 403/404/422 comes before the first byte; the entries must then be written in
   * name order. While it is at hand each object's XML is deflated and kept packed (a small fraction of the object)
   * up to PACKED_BUDGET; beyond that only type and key are kept and the object is read again when its turn comes (an
   * object deleted in between then ends the stream with an error: a broken download). Reading every object twice
   * instead cost much more CPU (measured: bench/README.md).
   */
  async exportStream(
    principal: Principal,
    roots: ReadonlyArray<{ type: TypeName; key: string }>,
    options: { references: boolean },
  ): Promise<AsyncGenerator<Buffer>> {
    const seen = new Map<string, { type: TypeName; key: string; packed: PackedEntry | undefined }>();
    let newest = 0;
    let kept = 0;
    const budget = this.deps.packedBudget ?? PACKED_BUDGET;
    const pause = loopYielder();
    const queue = [...roots];
    for (let i = 0; i < queue.length; i++) {
      await pause();
      const next = itemAt(queue, i);
      const type = requireType(next.type);
      const canonical = parseKey(type.key, next.key)?.key ?? next.key;
      const label = businessKey(type.name, canonical);
      if (seen.has(label)) continue;
      const { object, data } = await this.deps.objects.read(principal, type, canonical);
      const packed = kept < budget ? await packEntry(Buffer.from(objectToXml(type, data))) : undefined;
      kept += packed?.packed.length ?? 0;
      seen.set(label, { type: type.name, key: object.key, packed });
      newest = Math.max(newest, (data.LastModificationTime as { ms: number } | undefined)?.ms ?? 0);
      // A twin travels with it (docs/architecture.md §3: a chain is a JobDefinition and a JobChain of one name).
      const twin = type.traits.twin;
      if (
        twin &&
        (twin.when?.(data) ?? true) &&
        (twin.needsIt || (await this.deps.store.getObject(twin.type, object.key)))
      )
        queue.push({ type: twin.type, key: object.key });
      if (options.references)
        for (const r of collectReferences(type.fields, data))
          if (getType(r.type)?.storage === 'definition') queue.push({ type: r.type, key: r.key });
    }
    const sources: CarSource[] = [];
    for (const o of seen.values()) {
      const type = requireType(o.type);
      sources.push({
        name: objectEntryName(o.type, o.key),
        data: async () =>
          o.packed ?? Buffer.from(objectToXml(type, (await this.deps.objects.read(principal, type, o.key)).data)),
      });
      const files = type.traits.files;
      if (files)
        for (const f of await this.deps.store.blobs.list(files, o.key))
          sources.push({
            name: libraryEntryName(o.key, f.name),
            data: () => this.deps.store.blobs.get(files, o.key, f.name),
          });
    }
    const info = exportInfoXml({
      sourceSystem: hostname(),
      sourceAddress: this.deps.sourceAddress,
      user: principal.user,
      date: formatInstant(newest, 'UTC'),
    });
    sources.push({ name: EXPORT_INFO, data: () => Buffer.from(info) });
    return carChunks(sources);
  }
}
