import { globMatch } from '../domain/alert-match.ts';
import { emptyRecord } from '../domain/own.ts';
import { substitute } from '../domain/substitute.ts';
import { invalid } from '../errors.ts';
import type { FieldKind, TypeName } from '../model/fields.ts';
import { fieldDefault, type DataOf } from '../model/data.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { requireType } from '../model/registry.ts';

/**
 * Import rules: which objects of an archive are imported, into which
 * partitions, with which field values. Pure: objects in, objects out, in the JSON-input form of the registry.
 */

export interface ArchiveObject {
  type: TypeName;
  /** Canonical key, e.g. `GLOBAL.Load`. */
  key: string;
  body: Record<string, unknown>;
}

export interface ImportRules {
  /** Partition for objects no mapping names (the request's TargetPartition, else the rule set's). */
  targetPartition: string | null;
  mappings: ReadonlyMap<string, string>;
  includes: readonly string[];
  excludes: readonly string[];
  overrides: ReadonlyArray<{ TypePattern: string; Field: string; Value: string | null }>;
  /** Rule-set properties: `${name}` in an override value is replaced by its value. */
  properties: Readonly<Record<string, string>>;
}

type RuleFields = 'TargetPartition' | 'PartitionMappings' | 'Includes' | 'Excludes' | 'PropertyOverrides';

/** The rules of a stored ImportRuleSet, with the request's target partition (which wins) and properties. */
export function rulesOf(
  ruleSet: Pick<DataOf<'ImportRuleSet'>, RuleFields> | undefined,
  target: string | null,
  properties: Record<string, string>,
): ImportRules {
  const listed = <F extends Exclude<RuleFields, 'TargetPartition'>>(name: F) =>
    ruleSet?.[name] ?? fieldDefault('ImportRuleSet', name);
  return {
    targetPartition: target ?? ruleSet?.TargetPartition ?? null,
    mappings: new Map(listed('PartitionMappings').map((m) => [m.From, m.To])),
    includes: listed('Includes'),
    excludes: listed('Excludes'),
    // Stored records hold every field of theirs (null when unset).
    overrides: listed('PropertyOverrides').map((o) => ({ ...o, Value: o.Value ?? null })),
    properties,
  };
}

/** `<parameter1>=<value1>[,<parameter2>=<value2>]*` (the X-Vendor-Ruleset-Properties header) → a record; 400 when malformed. */
export function parseRuleSetProperties(text: string | undefined): Record<string, string> {
  const out = emptyRecord<string>();
  if (text === undefined || text.trim() === '') return out;
  if (text.length > 8192) throw invalid('The rule-set properties are longer than 8192 characters');
  for (const pair of text.split(',')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]{0,79})\s*=(.*)$/.exec(pair);
    if (!m?.[1]) throw invalid(`Rule-set property "${pair.trim()}" is not <parameter>=<value>`);
    out[m[1]] = (m[2] ?? '').trim();
  }
  return out;
}

export interface RuledObject extends ArchiveObject {
  /** The key it had in the archive, before partitions were mapped. */
  archiveKey: string;
}

/**
 * Applies the rules: objects left out by Includes/Excludes are returned as `skipped`; the others move to their
 * partitions, references to moved objects follow them (and references into a mapped partition always do), and
 * property overrides are applied last. Also returns where a reference ends up (for entries that are not objects,
 * such as a library's files). Throws 400 for an override value that does not fit its field.
 */
export function applyRules(
  objects: readonly ArchiveObject[],
  rules: ImportRules,
): { imported: RuledObject[]; skipped: ArchiveObject[]; reference: (type: TypeName, key: string) => string } {
  const { kept, skipped, reference, rule } = importRuling(objects, rules);
  return { imported: kept.map(rule), skipped, reference };
}

/**
 * applyRules in two steps, so that an import can rule its objects a few at a time and let the event loop go in
 * between (10,000 objects take a few hundred ms): which objects are kept and skipped, and `rule` for each kept one.
 */
export function importRuling(
  objects: readonly ArchiveObject[],
  rules: ImportRules,
): {
  kept: ArchiveObject[];
  skipped: ArchiveObject[];
  reference: (type: TypeName, key: string) => string;
  rule: (o: ArchiveObject) => RuledObject;
} {
  const label = (o: ArchiveObject) => businessKey(o.type, o.key);
  const included = (o: ArchiveObject) =>
    (rules.includes.length === 0 || rules.includes.some((g) => globMatch(g, label(o)))) &&
    !rules.excludes.some((g) => globMatch(g, label(o)));
  const kept = objects.filter(included);
  const inArchive = new Set(kept.map(label));
  const movePartition = (partition: string) => rules.mappings.get(partition) ?? rules.targetPartition ?? partition;
  /** Where an object the archive holds ends up. */
  const moved = (type: TypeName, key: string): string => {
    const shape = requireType(type).key;
    if (shape === 'name') return movePartition(key);
    if (shape === 'partitioned') {
      const p = parseKey('partitioned', key);
      return p ? `${movePartition(p.partition)}.${p.identity.Name}` : key;
    }
    if (shape === 'queueProvider') {
      const p = parseKey('queueProvider', key);
      return p
        ? `${reference('ProcessServer', p.identity.ProcessServer ?? '')}.${reference('Queue', p.identity.Queue ?? '')}`
        : key;
    }
    return key;
  };
  /** Where a reference points after the import. */
  const reference = (type: TypeName, key: string): string => {
    if (inArchive.has(businessKey(type, key))) return moved(type, key);
    const shape = requireType(type).key;
    const p = parseKey(shape, key);
    if (!p || !rules.mappings.has(p.partition)) return key;
    if (shape === 'name') return rules.mappings.get(key) ?? key;
    if (shape === 'partitioned') return `${rules.mappings.get(p.partition)}.${p.identity.Name}`;
    return key;
  };
  const rule = (o: ArchiveObject): RuledObject => {
    const type = requireType(o.type);
    const key = moved(o.type, o.key);
    const body = rewriteReferences(type, o.body, reference);
    const identity = parseKey(type.key, key)?.identity ?? {};
    for (const name of type.identity) if (identity[name] !== undefined) body[name] = identity[name];
    applyOverrides(type, body, rules);
    return { type: o.type, key, body, archiveKey: o.key };
  };
  return { kept, skipped: objects.filter((o) => !included(o)), reference, rule };
}

function rewriteReferences(
  type: ObjectType,
  body: Record<string, unknown>,
  reference: (type: TypeName, key: string) => string,
): Record<string, unknown> {
  const walk = (kind: FieldKind, v: unknown): unknown => {
    if (v === null || v === undefined) return v;
    if (kind.kind === 'reference' && typeof v === 'string') {
      const p = parseKey(requireType(kind.type).key, v);
      return p ? reference(kind.type, p.key) : v;
    }
    if (kind.kind === 'record' && typeof v === 'object' && !Array.isArray(v)) {
      const out: Record<string, unknown> = { ...v };
      for (const f of kind.fields) if (f.name in out) out[f.name] = walk(f.kind, out[f.name]);
      return out;
    }
    if (kind.kind === 'list' && Array.isArray(v)) return v.map((item) => walk(kind.of, item));
    return v;
  };
  const out: Record<string, unknown> = { ...body };
  for (const f of type.fields) if (f.name in out) out[f.name] = walk(f.kind, out[f.name]);
  return out;
}

function applyOverrides(type: ObjectType, body: Record<string, unknown>, rules: ImportRules): void {
  for (const o of rules.overrides) {
    if (!globMatch(o.TypePattern, type.name)) continue;
    const f = type.byName.get(o.Field);
    if (!f || f.readOnly || f.derived || type.identity.includes(f.name)) continue;
    body[f.name] =
      o.Value === null ? null : overrideValue(f.kind, substitute(o.Value, rules.properties), `${type.name}.${f.name}`);
  }
}

/** An override is written as text; fields that are not text take its JSON-interface meaning. */
function overrideValue(kind: FieldKind, text: string, where: string): unknown {
  switch (kind.kind) {
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n))
        throw invalid(`Property override of ${where}: "${text}" is not a number`);
      return n;
    }
    case 'boolean':
      if (text !== 'true' && text !== 'false')
        throw invalid(`Property override of ${where}: "${text}" is not true or false`);
      return text === 'true';
    case 'list':
    case 'record':
    case 'map':
      try {
        return JSON.parse(text);
      } catch {
        throw invalid(`Property override of ${where}: the value must be JSON`);
      }
    default:
      return text;
  }
}
