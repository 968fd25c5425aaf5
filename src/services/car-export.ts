import { hostname } from 'node:os';
import { type CarEntry, writeCar } from '../car/archive.ts';
import { EXPORT_INFO, exportInfoXml, libraryEntryName, objectEntryName } from '../car/layout.ts';
import { objectToXml } from '../car/object-xml.ts';
import type { TypeName } from '../model/fields.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import { getType, requireType } from '../model/registry.ts';
import { collectReferences } from '../model/validate.ts';
import type { Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import type { ObjectService } from './objects.ts';

export interface CarExportDeps {
  store: Store;
  objects: ObjectService;
  /** `source-address` of export-info.xml: where this server is reached. */
  sourceAddress: string;
}

/**
 * Writes CAR archives (docs/architecture.md §14): the object XML of each object, its library files, and export-info.xml, with
 * the same privilege rules as reading the objects. The bytes depend only on the objects and the user: entries are
 * sorted, timestamps fixed, and export-info's date is the newest modification time among the objects.
 */
export class CarExporter {
  private readonly d: CarExportDeps;

  constructor(deps: CarExportDeps) {
    this.d = deps;
  }

  /** The objects named; with `references`, also every object they refer to, and theirs in turn. */
  async exportMany(
    p: Principal,
    roots: ReadonlyArray<{ type: TypeName; key: string }>,
    options: { references: boolean },
  ): Promise<Buffer> {
    const seen = new Map<string, { type: TypeName; key: string; data: Record<string, unknown> }>();
    const queue = [...roots];
    for (let i = 0; i < queue.length; i++) {
      const next = queue[i] as { type: TypeName; key: string };
      const type = requireType(next.type);
      const canonical = parseKey(type.key, next.key)?.key ?? next.key;
      const label = businessKey(type.name, canonical);
      if (seen.has(label)) continue;
      const { object, data } = await this.d.objects.read(p, type, canonical);
      seen.set(label, { type: type.name, key: object.key, data });
      // A twin travels with it (docs/architecture.md §3: a chain is a JobDefinition and a JobChain of one name).
      const twin = type.traits.twin;
      if (
        twin &&
        (twin.when?.(data) ?? true) &&
        (twin.needsIt || (await this.d.store.getObject(twin.type, object.key)))
      )
        queue.push({ type: twin.type, key: object.key });
      if (options.references)
        for (const r of collectReferences(type.fields, data))
          if (getType(r.type)?.storage === 'definition') queue.push({ type: r.type, key: r.key });
    }
    const entries: CarEntry[] = [];
    let newest = 0;
    for (const o of seen.values()) {
      entries.push({
        name: objectEntryName(o.type, o.key),
        data: Buffer.from(objectToXml(requireType(o.type), o.data)),
      });
      newest = Math.max(newest, (o.data.LastModificationTime as { ms: number } | undefined)?.ms ?? 0);
      const files = requireType(o.type).traits.files;
      if (files)
        for (const f of await this.d.store.blobs.list(files, o.key)) {
          const content = await this.d.store.blobs.get(files, o.key, f.name);
          if (content) entries.push({ name: libraryEntryName(o.key, f.name), data: content });
        }
    }
    entries.push({
      name: EXPORT_INFO,
      data: Buffer.from(
        exportInfoXml({
          sourceSystem: hostname(),
          sourceAddress: this.d.sourceAddress,
          user: p.user,
          date: formatInstant(newest, 'UTC'),
        }),
      ),
    });
    return writeCar(entries);
  }
}
