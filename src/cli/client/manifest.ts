import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { Field, FieldKind, TypeName } from '../../model/fields.ts';
import { parseKey } from '../../model/keys.ts';
import type { ObjectType } from '../../model/object-type.ts';
import { allTypes, getType, keyShapeOf } from '../../model/registry.ts';
import { collectReferences } from '../../model/validate.ts';
import { formatInstant, parseDate } from '../../time/date-format.ts';
import { itemAt } from '../../domain/item-at.ts';
import { errorMessage } from '../../errors.ts';

/**
 * Jobs as code, the pure part: objects described in files (`{Type, Key, …fields}`), their wanted state filled in
 * from the registry's defaults, the difference with what the server answers, and the order to apply them in.
 * Everything per type is read from the registry (src/model), so a new field or type needs nothing here.
 *
 * A file's object is the whole truth about the object: a writable field it leaves out is reset to the registry's
 * default (or emptied), so the files alone decide the result and applying them twice changes nothing.
 */

// biome-ignore lint/suspicious/noExplicitAny: objects as the server renders them
type Json = any;

export interface Manifest {
  type: ObjectType;
  /** Canonical business key, e.g. `GLOBAL.Nightly` for `Nightly`. */
  key: string;
  /** The partition the key governs (prune works per partition). */
  partition: string;
  /** Every writable field, filled in and normalized: what the object must look like. */
  desired: Record<string, unknown>;
  /** Write-only fields given (passwords, agent secrets): sent, never compared (the server never shows them). */
  secrets: Record<string, unknown>;
  /** Where it was read: `file.yaml#2`. */
  source: string;
}

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The fields a file sets: writable, not derived, not fixed by the key. */
export const writableFields = (type: ObjectType): Field[] =>
  type.fields.filter((f) => !f.readOnly && !f.derived && !type.identity.includes(f.name) && f.kind.kind !== 'secret');

/** A value in the form the server renders it: keys canonical, dates written out, record defaults filled in. */
export function normalize(kind: FieldKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (kind.kind) {
    case 'reference':
      return typeof v === 'string' ? (parseKey(keyShapeOf(kind.type), v)?.key ?? v) : v;
    case 'date':
      if (typeof v !== 'string') return v;
      try {
        const at = parseDate(v, 'UTC');
        return formatInstant(at.ms, at.zone);
      } catch {
        return v;
      }
    case 'record': {
      if (!isObject(v)) return v;
      const out: Record<string, unknown> = {};
      for (const f of kind.fields) {
        if (f.readOnly || f.derived || f.kind.kind === 'secret') continue;
        out[f.name] = normalize(f.kind, v[f.name] === undefined ? (f.default ?? null) : v[f.name]);
      }
      return out;
    }
    case 'list':
      return Array.isArray(v) ? v.map((item) => normalize(kind.of, item)) : v;
    default:
      return v;
  }
}

/** The wanted state of an object from a file's fields (defaults for what it leaves out). */
function desiredOf(type: ObjectType, given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of writableFields(type))
    out[f.name] = normalize(f.kind, given[f.name] === undefined ? (f.default ?? null) : given[f.name]);
  return out;
}

/** What an object would be if a file gave only its Type and Key. */
export const defaultsOf = (type: ObjectType): Record<string, unknown> => desiredOf(type, {});

/** The same fields of an object as the server rendered it. */
export function currentOf(type: ObjectType, rendered: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of writableFields(type)) out[f.name] = normalize(f.kind, rendered[f.name]);
  return out;
}

export function diff(current: Record<string, unknown>, desired: Record<string, unknown>): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const [field, after] of Object.entries(desired))
    if (!isDeepStrictEqual(current[field], after)) changes.push({ field, before: current[field] ?? null, after });
  return changes;
}

const keyForm = (type: ObjectType): string =>
  type.key === 'queueProvider'
    ? '<ps_partition>.<ps_name>.<queue_partition>.<queue_name>'
    : type.key === 'name'
      ? '<name>'
      : '<partition>.<name>';

/** One object of a file, checked against the registry; a problem is an Error naming the file and the field. */
export function toManifest(doc: unknown, source: string): Manifest {
  if (!isObject(doc)) throw new Error(`${source}: an object must be a mapping with Type and Key`);
  const { Type: typeName, Key: keyText, ...fields } = doc;
  if (typeof typeName !== 'string') throw new Error(`${source}: Type is missing (e.g. Type: JobDefinition)`);
  const type = getType(typeName);
  if (type?.storage !== 'definition') {
    const names = allTypes()
      .filter((t) => t.storage === 'definition')
      .map((t) => t.name);
    throw new Error(`${source}: Type ${typeName} cannot be applied; one of ${names.join(', ')}`);
  }
  if (typeof keyText !== 'string') throw new Error(`${source}: Key is missing (${keyForm(type)})`);
  const parsed = parseKey(type.key, keyText);
  if (!parsed) throw new Error(`${source}: Key "${keyText}" is not a ${type.name} key ${keyForm(type)}`);
  const where = `${source} (${type.name} ${parsed.key})`;
  const secrets: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    const f = type.byName.get(name);
    if (!f) throw new Error(`${where}: ${name} is not a field of ${type.name}`);
    if (type.identity.includes(name)) {
      if (normalize(f.kind, value) !== parsed.identity[name])
        throw new Error(`${where}: ${name} must match the Key (${parsed.identity[name]}) or be left out`);
      continue;
    }
    if (f.readOnly || f.derived) throw new Error(`${where}: ${name} is set by the server and cannot be applied`);
    if (f.kind.kind === 'secret') secrets[name] = value;
  }
  return {
    type,
    key: parsed.key,
    partition: parsed.partition,
    desired: desiredOf(type, fields),
    secrets,
    source,
  };
}

/** The objects of one file: YAML (several documents separated by `---`) or JSON; a document may be a list. */
export function parseFile(text: string, file: string): Manifest[] {
  const docs: Array<{ value: unknown; at: string }> = [];
  if (file.endsWith('.json')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new Error(`${file}: ${errorMessage(err)}`);
    }
    docs.push({ value, at: file });
  } else {
    for (const [i, doc] of parseAllDocuments(text).entries()) {
      const error = doc.errors[0];
      if (error) throw new Error(`${file}: ${error.message.split('\n')[0]}`);
      docs.push({ value: doc.toJS(), at: `${file}#${i + 1}` });
    }
  }
  const out: Manifest[] = [];
  for (const { value, at } of docs) {
    if (value === null || value === undefined) continue; // an empty document
    if (Array.isArray(value)) for (const [j, item] of value.entries()) out.push(toManifest(item, `${at}[${j}]`));
    else out.push(toManifest(value, at));
  }
  return out;
}

export const idOf = (type: TypeName | string, key: string): string => `${type}:${key}`;

/**
 * The objects that applying this one makes exist: itself, and the twin its type creates with it when there is none
 * (a JobChain's JobDefinition, docs/architecture.md §3), so what refers to that twin waits for this one.
 */
export function provides(m: Manifest): string[] {
  const twin = m.type.traits.twin;
  return [idOf(m.type.name, m.key), ...(twin?.madeWith ? [idOf(twin.type, m.key)] : [])];
}

/** Other objects this one needs first: its references (registry reference fields) and the key's parts. */
function needs(m: Manifest): string[] {
  const parsed = parseKey(m.type.key, m.key);
  const data = { ...m.desired, ...(parsed?.identity ?? {}) };
  const found = collectReferences(m.type.fields, data).map((r) => idOf(r.type, r.key));
  // A twin it needs comes first (docs/architecture.md §3: a JobChain needs the JobDefinition of its key).
  const twin = m.type.traits.twin;
  if (twin?.needsIt) found.push(idOf(twin.type, m.key));
  return found;
}

/**
 * The objects this one refers to, which the server requires to exist when it is created or changed: the partition
 * of its key (`path` Partition) and every reference field (`path` as the server names it), keys made canonical.
 */
export function referencesOf(m: Manifest): Array<{ path: string; type: TypeName; key: string; id: string }> {
  const parsed = parseKey(m.type.key, m.key);
  const data = { ...m.desired, ...(parsed?.identity ?? {}) };
  return collectReferences(m.type.fields, data).map((r) => {
    const key = parseKey(keyShapeOf(r.type), r.key)?.key ?? r.key;
    return { path: r.path, type: r.type, key, id: idOf(r.type, key) };
  });
}

/** The types a type's writable fields refer to (records and lists included), itself left out. */
function referencedTypes(type: ObjectType): Set<TypeName> {
  const found = new Set<TypeName>();
  const walk = (kind: FieldKind): void => {
    if (kind.kind === 'reference') found.add(kind.type);
    else if (kind.kind === 'list') walk(kind.of);
    else if (kind.kind === 'record') {
      for (const f of kind.fields) if (!f.readOnly && !f.derived) walk(f.kind);
    }
  };
  for (const f of type.fields) if (!f.readOnly && !f.derived) walk(f.kind);
  found.delete(type.name);
  return found;
}

/**
 * Each type's layer in the registry's reference graph: 0 for a type that refers to none, else one more than the
 * deepest type it refers to (Partition 0, TimeWindow 1, Queue 2, JobDefinition 3, JobChain 4 …). A reference
 * back into a type still being measured (a cycle) is not counted.
 */
function typeRanks(): Map<string, number> {
  const ranks = new Map<string, number>();
  const measuring = new Set<string>();
  const rankOf = (type: ObjectType): number => {
    const known = ranks.get(type.name);
    if (known !== undefined) return known;
    measuring.add(type.name);
    let rank = 0;
    for (const name of referencedTypes(type)) {
      const other = getType(name);
      if (other && !measuring.has(name)) rank = Math.max(rank, rankOf(other) + 1);
    }
    measuring.delete(type.name);
    ranks.set(type.name, rank);
    return rank;
  };
  for (const t of allTypes()) rankOf(t);
  return ranks;
}

/**
 * The order to create or change objects in: everything an object refers to first (among the objects given), ties
 * broken by the type's layer in the registry's reference graph and then the files' order. Reversed, it is the order to delete in.
 */
export function applyOrder(manifests: readonly Manifest[]): Manifest[] {
  // An object's own id wins over the same id made as another's twin (both in the files: the object itself).
  const at = new Map([
    ...manifests.flatMap((m, i) => provides(m).map((id) => [id, i] as const)),
    ...manifests.map((m, i) => [idOf(m.type.name, m.key), i] as const),
  ]);
  const rank = typeRanks();
  const rankOf = (m: Manifest): number => {
    const found = rank.get(m.type.name);
    if (found === undefined) throw new Error(`no rank for the type ${m.type.name}`);
    return found;
  };
  const waitingFor = manifests.map(
    (m, i) =>
      new Set(
        needs(m).flatMap((id) => {
          const j = at.get(id);
          return j !== undefined && j !== i ? [j] : [];
        }),
      ),
  );
  const done = new Set<number>();
  const out: Manifest[] = [];
  while (out.length < manifests.length) {
    let next: number | undefined;
    for (let i = 0; i < manifests.length; i++) {
      if (done.has(i) || [...itemAt(waitingFor, i)].some((j) => !done.has(j))) continue;
      const better = next === undefined || rankOf(itemAt(manifests, i)) < rankOf(itemAt(manifests, next));
      if (better) next = i;
    }
    if (next === undefined) {
      const stuck = manifests.filter((_, i) => !done.has(i)).map((m) => idOf(m.type.name, m.key));
      throw new Error(`these objects refer to each other in a circle: ${stuck.join(', ')}`);
    }
    done.add(next);
    out.push(itemAt(manifests, next));
  }
  return out;
}

/** A manifest for an object as the server has it (for ordering deletes). */
export function manifestOfServerObject(type: ObjectType, rendered: Json): Manifest {
  const key = keyOfRendered(rendered);
  const parsed = parseKey(type.key, key);
  return {
    type,
    key,
    partition: parsed?.partition ?? '',
    desired: currentOf(type, rendered),
    secrets: {},
    source: 'server',
  };
}

/** `Type:key` of the renderer's businessKey → key. */
export const keyOfRendered = (rendered: Json): string => {
  const bk = String(rendered.businessKey ?? '');
  return bk.slice(bk.indexOf(':') + 1);
};

/** Drops what equals the default (recursively in records), so exported files hold only what was chosen. */
function compact(kind: FieldKind, v: unknown): unknown {
  if (kind.kind === 'record' && isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const f of kind.fields) {
      if (!(f.name in v)) continue;
      const value = v[f.name];
      if (isDeepStrictEqual(normalize(f.kind, value), normalize(f.kind, f.default ?? null))) continue;
      out[f.name] = compact(f.kind, value);
    }
    return out;
  }
  if (kind.kind === 'list' && Array.isArray(v)) return v.map((item) => compact(kind.of, item));
  return v;
}

/**
 * An object as the server renders it → the document `apply` reads back to the same object: Type and Key, then the
 * writable fields that differ from their defaults (what GET adds — uniqueId, businessKey, times, state, derived
 * lists — is left out).
 */
export function exportDocument(type: ObjectType, rendered: Json): Record<string, unknown> {
  const doc: Record<string, unknown> = { Type: type.name, Key: keyOfRendered(rendered) };
  const current = currentOf(type, rendered);
  for (const f of writableFields(type)) {
    if (isDeepStrictEqual(current[f.name], normalize(f.kind, f.default ?? null))) continue;
    doc[f.name] = compact(f.kind, current[f.name]);
  }
  return doc;
}
