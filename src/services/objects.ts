import type { AuditEntry } from '../store/audit-store.ts';
import { ObjectRestorer } from './object-restore.ts';
import { forbidden } from '../errors.ts';
import type { TypeName } from '../model/fields.ts';
import type { ParsedKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { getType } from '../model/registry.ts';
import type { Principal } from '../security/privileges.ts';
import type { ObjectSummary, Store, StoredObject } from '../store/store.ts';
import type { ListAnswer } from './list-query.ts';
import { type ImportOutcome, ObjectImporter } from './object-imports.ts';
import { ObjectListCache } from './object-list-cache.ts';
import { ObjectReader } from './object-reads.ts';
import { ObjectWriter } from './object-writes.ts';
import type { ObjectServiceDeps } from './object-write-steps.ts';

export type { ImportOutcome } from './object-imports.ts';
export { OBJECT_LIST_PARAMS } from './object-reads.ts';
export { type ObjectServiceDeps, SYSTEM_PRINCIPAL } from './object-write-steps.ts';

/**
 * xml-put names its object in the body: before the body is read, only the right to store some object can be checked
 * (Create or Edit on a definition type in some partition, else 403); `ObjectService.put` then checks the object's own.
 */
export function authorizeStore(principal: Principal): void {
  const storable = (type: string) => type === '*' || getType(type)?.storage === 'definition';
  const holds = principal.grants.some(
    (g) => storable(g.type) && (g.privileges.includes('Create') || g.privileges.includes('Edit')),
  );
  if (!holds) throw forbidden('You need the Create or Edit privilege on an object type to store objects');
}

/**
 * Create, read, update and delete for every definition type of the registry, with the privilege rules of
 * docs/architecture.md §10: no View → 404 exactly as for a missing object; View but not the operation's privilege → 403;
 * GET also needs View on every object referred to, else 403 naming it. One front for the routes, the import and the
 * bootstrap over its parts: reads (object-reads.ts), the list cache (object-list-cache.ts), writes
 * (object-writes.ts, deletes in object-deletes.ts) and imports (object-imports.ts).
 */
export class ObjectService {
  private readonly reader: ObjectReader;
  private readonly listCache: ObjectListCache;
  private readonly writer: ObjectWriter;
  private readonly importer: ObjectImporter;
  private readonly restorer: ObjectRestorer;

  constructor(deps: ObjectServiceDeps) {
    this.reader = new ObjectReader(deps);
    this.listCache = new ObjectListCache(deps.store);
    this.writer = new ObjectWriter(deps, this.reader);
    this.importer = new ObjectImporter(deps);
    this.restorer = new ObjectRestorer(deps, this.reader);
  }

  /** Puts an object back as an audit entry saw it before its change (docs/architecture.md §18). */
  restore(principal: Principal, entry: AuditEntry): Promise<Record<string, unknown>> {
    return this.restorer.restore(principal, entry);
  }

  scripts(principal: Principal): Promise<Array<{ type: TypeName; key: string; description: unknown }>> {
    return this.reader.scripts(principal);
  }

  getText(principal: Principal, type: ObjectType, pathKey: string): Promise<string> {
    return this.reader.getText(principal, type, pathKey);
  }

  getXml(principal: Principal, type: ObjectType, pathKey: string): Promise<string> {
    return this.reader.getXml(principal, type, pathKey);
  }

  list(principal: Principal, type: ObjectType, query: unknown): Promise<ListAnswer> {
    return this.reader.list(principal, type, query);
  }

  cachedList(principal: Principal, type: ObjectType, variant: string, build: () => Promise<Buffer>): Promise<Buffer> {
    return this.listCache.cachedList(principal, type, variant, build);
  }

  visibleSummaries(principal: Principal, type: ObjectType): AsyncGenerator<ObjectSummary[]> {
    return this.reader.visibleSummaries(principal, type);
  }

  read(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
  ): Promise<{ object: StoredObject; data: Record<string, unknown> }> {
    return this.reader.read(principal, type, pathKey);
  }

  ownedFiles(principal: Principal): Promise<Array<{ name: string; data: Buffer }>> {
    return this.reader.ownedFiles(principal);
  }

  authorizeCreate(principal: Principal, type: ObjectType, pathKey: string): ParsedKey {
    return this.writer.authorizeCreate(principal, type, pathKey);
  }

  authorizeChange(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    privilege: 'Edit' | 'Delete' | 'Control',
    what: string,
  ): Promise<ParsedKey> {
    return this.writer.authorizeChange(principal, type, pathKey, privilege, what);
  }

  create(principal: Principal, type: ObjectType, pathKey: string, body: unknown): Promise<Record<string, unknown>> {
    return this.writer.create(principal, type, pathKey, body);
  }

  put(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    body: unknown,
  ): Promise<{ saved: Record<string, unknown>; created: boolean }> {
    return this.writer.put(principal, type, pathKey, body);
  }

  update(principal: Principal, type: ObjectType, pathKey: string, body: unknown): Promise<Record<string, unknown>> {
    return this.writer.update(principal, type, pathKey, body);
  }

  setEnabled(
    principal: Principal,
    type: ObjectType,
    pathKey: string,
    enabled: boolean,
  ): Promise<Record<string, unknown>> {
    return this.writer.setEnabled(principal, type, pathKey, enabled);
  }

  delete(principal: Principal, type: ObjectType, pathKey: string): Promise<void> {
    return this.writer.delete(principal, type, pathKey);
  }

  importObject(
    tx: Store,
    principal: Principal,
    type: ObjectType,
    key: string,
    body: Record<string, unknown>,
  ): Promise<ImportOutcome> {
    return this.importer.importObject(tx, principal, type, key, body);
  }

  precheckImport(type: ObjectType, key: string, body: Record<string, unknown>): Promise<void> {
    return this.importer.precheckImport(type, key, body);
  }

  importCommitted(type: ObjectType, result: ImportOutcome): Promise<void> {
    return this.importer.importCommitted(type, result);
  }
}
