/**
 * Object ⇄ XML (docs/architecture.md §13), driven by the registry alone: there is no per-type code here, so a field added to a
 * type file appears in `api-rest/object`, `xml-put` and CAR entries without touching this file.
 *
 * Writing (stored form → XML): the root element is the type name, then one child per field in registry order.
 * Secret fields are never written. null → empty element; a reference → empty element with `type` and `path`;
 * a record → one child per record field; a list → a wrapper holding one element per item (see itemName); a map → a
 * wrapper holding one item element per entry, its name in the attribute `name` and its value as text
 * (`<Headers><Header name="Accept">application/json</Header></Headers>`).
 *
 * Reading (XML → the body the JSON interface accepts, i.e. the input of validateObjectBody). Two things XML
 * cannot tell apart, and how they read back:
 * - an empty element means null, so an empty string is written as, and reads back as, null;
 * - an empty list wrapper means an empty list, so a null list reads back as [] (and a null map as {});
 *   an empty map entry is the empty text, since an entry's value is never null.
 * Values are not trimmed (`<Description> x </Description>` is " x "); only number and boolean text is.
 */
import { invalid } from '../errors.ts';
import type { Field, FieldKind } from '../model/fields.ts';
import type { ObjectType } from '../model/object-type.ts';
import { getType } from '../model/registry.ts';
import { formatInstant, type ZonedInstant } from '../time/date-format.ts';
import { el, serializeXml, type XmlElement } from './xml.ts';

/**
 * Name of one item element of a list field: the field name without its trailing "s" (Parameters → Parameter,
 * Files → File), "Item" when it has none. Names ending in "sses" or "uses" drop "es" (Statuses → Status).
 */
export function itemName(fieldName: string): string {
  if (/(?:ss|us)es$/.test(fieldName)) return fieldName.slice(0, -2);
  if (fieldName.length > 1 && fieldName.endsWith('s')) return fieldName.slice(0, -1);
  return 'Item';
}

/** The items of a list that is itself a list item have no field name to derive theirs from. */
const NESTED_ITEM = 'Item';

const isZoned = (v: unknown): v is ZonedInstant =>
  typeof v === 'object' && v !== null && typeof (v as ZonedInstant).ms === 'number';
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function valueElement(name: string, kind: FieldKind, v: unknown, isItem: boolean): XmlElement {
  if (v === null || v === undefined) return el(name);
  switch (kind.kind) {
    case 'reference':
      return el(name, [], { type: kind.type, path: String(v) });
    case 'record':
      return isRecord(v) ? el(name, fieldElements(kind.fields, v)) : el(name);
    case 'list': {
      const item = isItem ? NESTED_ITEM : itemName(name);
      return el(
        name,
        (Array.isArray(v) ? v : []).map((x) => valueElement(item, kind.of, x, true)),
      );
    }
    case 'map': {
      const item = isItem ? NESTED_ITEM : itemName(name);
      const entries = isRecord(v) ? Object.entries(v) : [];
      return el(
        name,
        entries.map(([key, x]) => el(item, String(x), { name: key })),
      );
    }
    case 'date':
      // Stored dates are {ms, zone}; a date already in text form is written as it is.
      return el(name, isZoned(v) ? formatInstant(v.ms, v.zone) : String(v));
    case 'boolean':
      return el(name, v === true ? 'true' : 'false');
    case 'secret':
      return el(name); // unreachable: secret fields are skipped by fieldElements
    default:
      return el(name, String(v));
  }
}

const fieldElements = (fields: readonly Field[], data: Readonly<Record<string, unknown>>): XmlElement[] =>
  fields.filter((f) => f.kind.kind !== 'secret').map((f) => valueElement(f.name, f.kind, data[f.name], false));

/** The object's document element: the type as root, one child per non-secret field in registry order. */
export function objectToElement(type: ObjectType, data: Readonly<Record<string, unknown>>): XmlElement {
  return el(type.name, fieldElements(type.fields, data));
}

/** The object's XML document (docs/architecture.md §13); `data` is the stored form (dates as {ms, zone}). */
export function objectToXml(type: ObjectType, data: Readonly<Record<string, unknown>>): string {
  return serializeXml(objectToElement(type, data));
}

// ---------------------------------------------------------------------------------------------
// Reading.

export interface ElementToBodyOptions {
  /**
   * Also read the elements of read-only and derived fields (they are skipped by default, so that the XML of a
   * GET can be sent back with xml-put). For reading a whole object back, e.g. a runtime object or a test.
   */
  includeReadOnly?: boolean;
}

const clip = (s: string): string => (s.length > 40 ? `${s.slice(0, 40)}…` : s);
const fail = (path: string, message: string): never => {
  throw invalid(`Element "${path}" ${message}`);
};
const isBlank = (s: string): boolean => /^[ \t\n\r]*$/.test(s);
const attribute = (e: XmlElement, name: string): string | undefined =>
  Object.hasOwn(e.attributes, name) ? e.attributes[name] : undefined;
// What a JSON number may be written as; hexadecimal, Infinity and NaN are not numbers here.
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function readFields(
  fields: readonly Field[],
  parent: XmlElement,
  path: string,
  opts: ElementToBodyOptions,
): Record<string, unknown> {
  if (!isBlank(parent.text)) fail(path || parent.name, 'holds text; it must hold only the elements of its fields');
  const byName = new Map(fields.map((f) => [f.name, f]));
  const seen = new Set<string>();
  const out: Record<string, unknown> = {};
  for (const child of parent.children) {
    const at = path ? `${path}/${child.name}` : child.name;
    const f = byName.get(child.name);
    if (!f) return fail(at, `is not a field of ${parent.name}`);
    if (seen.has(f.name)) return fail(at, 'is repeated');
    seen.add(f.name);
    if ((f.readOnly || f.derived) && !opts.includeReadOnly) continue;
    out[f.name] = readValue(f.kind, child, at, false, opts);
  }
  return out;
}

function readValue(kind: FieldKind, e: XmlElement, at: string, isItem: boolean, opts: ElementToBodyOptions): unknown {
  switch (kind.kind) {
    case 'reference': {
      if (e.children.length > 0 || !isBlank(e.text))
        return fail(at, `must be an empty element with the attributes type="${kind.type}" and path`);
      const type = attribute(e, 'type');
      const path = attribute(e, 'path');
      if (type === undefined && path === undefined) return null;
      if (type !== undefined && type !== kind.type)
        return fail(at, `has type="${clip(type)}"; it references a ${kind.type}`);
      if (path === undefined || path === '') return fail(at, `has no path attribute naming the ${kind.type}`);
      return path;
    }
    case 'record':
      if (e.children.length === 0) {
        if (!isBlank(e.text)) fail(at, 'holds text; it must hold only the elements of its fields');
        return null;
      }
      return readFields(kind.fields, e, at, opts);
    case 'list': {
      if (!isBlank(e.text)) fail(at, 'holds text; it must hold one element per item');
      const item = isItem ? NESTED_ITEM : itemName(e.name);
      return e.children.map((c, i) => {
        const itemAt = `${at}/${c.name}[${i + 1}]`;
        if (c.name !== item) fail(itemAt, `must be named ${item}`);
        return readValue(kind.of, c, itemAt, true, opts);
      });
    }
    case 'map':
      return readMap(e, at, isItem ? NESTED_ITEM : itemName(e.name));
    default: {
      if (e.children.length > 0) return fail(at, 'must hold text, not elements');
      if (kind.kind === 'number') {
        const t = e.text.trim();
        if (t === '') return null;
        const n = Number(t);
        return NUMBER.test(t) && Number.isFinite(n) ? n : fail(at, `must be a number, not "${clip(t)}"`);
      }
      if (kind.kind === 'boolean') {
        const t = e.text.trim();
        if (t === '') return null;
        return t === 'true' || t === 'false' ? t === 'true' : fail(at, `must be true or false, not "${clip(t)}"`);
      }
      // Strings, text, enums, zones, dates and (write-only) secrets: the text exactly as written.
      return e.text === '' ? null : e.text;
    }
  }
}

/** A map's entries; Object.fromEntries keeps every name an own property (`__proto__` stays a name). */
function readMap(e: XmlElement, at: string, item: string): Record<string, string> {
  if (!isBlank(e.text)) fail(at, 'holds text; it must hold one element per entry');
  return Object.fromEntries(
    e.children.map((c, i) => {
      const itemAt = `${at}/${c.name}[${i + 1}]`;
      if (c.name !== item) fail(itemAt, `must be named ${item}`);
      if (c.children.length > 0) fail(itemAt, 'must hold text, not elements');
      const key = attribute(c, 'name');
      if (key === undefined) return fail(itemAt, 'has no name attribute');
      return [key, c.text];
    }),
  );
}

/**
 * An object element → a body in the shape the JSON interface accepts (the input of validateObjectBody): dates as
 * their text, references as their path, records as objects, lists as arrays, an empty element as null. Elements
 * of read-only and derived fields are skipped unless `includeReadOnly`. Throws 400 naming the element path
 * (e.g. `Parameters/Parameter[2]/DataType`).
 */
export function elementToBody(
  type: ObjectType,
  root: XmlElement,
  options: ElementToBodyOptions = {},
): Record<string, unknown> {
  if (root.name !== type.name) throw invalid(`The root element is ${clip(root.name)}; it must be ${type.name}`);
  return readFields(type.fields, root, '', options);
}

/** The registry type an object document is for: its root element's name must be a registry type, else 400. */
export function typeOfElement(root: XmlElement): ObjectType {
  const type = getType(root.name);
  if (!type) throw invalid(`The root element ${clip(root.name)} is not an object type`);
  return type;
}
