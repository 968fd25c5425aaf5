import type { Field, FieldKind } from '../../model/fields.ts';
import type { ObjectType } from '../../model/object-type.ts';
import { definitionTypes } from '../../model/registry.ts';

/**
 * The registry's declarations of the definition types as JSON, for the dashboard's forms (`GET ui/api/types`): the
 * very fields, kinds, defaults and descriptions that validate the JSON interface (docs/architecture.md §3), so the
 * console keeps no list of fields of its own. Patterns go as their source text; rules and traits stay on the server,
 * which checks them when the form is saved.
 */

export type KindDescription =
  | { kind: 'string'; maxLength: number; pattern?: string; patternText?: string }
  | { kind: 'text' | 'secret' | 'scalar'; maxLength: number }
  | { kind: 'number'; integer: boolean; min?: number; max?: number }
  | { kind: 'boolean' | 'date' | 'timezone' }
  | { kind: 'enum'; values: string[] }
  | { kind: 'reference'; type: string }
  | { kind: 'record'; fields: FieldDescription[] }
  | { kind: 'list'; of: KindDescription; maxItems: number }
  | { kind: 'map'; maxEntries: number; keyPatternText: string };

export interface FieldDescription {
  name: string;
  kind: KindDescription;
  required?: boolean;
  readOnly?: boolean;
  derived?: boolean;
  default?: unknown;
  description?: string;
}

export interface TypeDescription {
  name: string;
  description: string;
  /** The key shape (`partitioned`, `name`, `queueProvider`) and the fields that make the key, in its order. */
  key: string;
  identity: string[];
  privileges: string[];
  fields: FieldDescription[];
}

function describeKind(kind: FieldKind): KindDescription {
  switch (kind.kind) {
    case 'string':
      return {
        kind: 'string',
        maxLength: kind.maxLength,
        ...(kind.pattern ? { pattern: kind.pattern.source, patternText: kind.patternText } : {}),
      };
    case 'text':
    case 'secret':
    case 'scalar':
      return { kind: kind.kind, maxLength: kind.maxLength };
    case 'number':
      return { kind: 'number', integer: kind.integer, min: kind.min, max: kind.max };
    case 'boolean':
    case 'date':
    case 'timezone':
      return { kind: kind.kind };
    case 'enum':
      return { kind: 'enum', values: [...kind.values] };
    case 'reference':
      return { kind: 'reference', type: kind.type };
    case 'record':
      return { kind: 'record', fields: kind.fields.map(describeField) };
    case 'list':
      return { kind: 'list', of: describeKind(kind.of), maxItems: kind.maxItems };
    case 'map':
      return { kind: 'map', maxEntries: kind.maxEntries, keyPatternText: kind.keyPatternText };
  }
}

function describeField(f: Field): FieldDescription {
  return {
    name: f.name,
    kind: describeKind(f.kind),
    ...(f.required ? { required: true } : {}),
    ...(f.readOnly ? { readOnly: true } : {}),
    ...(f.derived ? { derived: true } : {}),
    ...(f.default !== undefined ? { default: f.default } : {}),
    ...(f.description ? { description: f.description } : {}),
  };
}

export function describeType(type: ObjectType): TypeDescription {
  return {
    name: type.name,
    description: type.description,
    key: type.key,
    identity: [...type.identity],
    privileges: [...type.privileges],
    fields: type.fields.map(describeField),
  };
}

/** Every definition type, in the registry's order; made once, the registry being fixed. */
export const TYPE_DESCRIPTIONS: readonly TypeDescription[] = definitionTypes().map(describeType);
