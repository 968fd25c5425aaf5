/**
 * The pure part of the definition forms (no DOM, tested in Node): which widget a registry kind gets, a value as the
 * widget's text and back, what an edit changes (the diff shown before saving, and the body of the PUT), which field a
 * server's 400 message names, and an object's key. The server validates what is sent; here a text only becomes the
 * JSON value it stands for (a number that does not read as one is sent as typed, for the server to refuse by name).
 */
/** @import { DefinitionObject, FieldDescription, FieldKind, TypeDescription } from './api-types.js' */

/**
 * @typedef {'line' | 'textarea' | 'number' | 'boolean' | 'select' | 'timezone' | 'reference' | 'secret' | 'record'
 *   | 'lines' | 'map' | 'json'} Widget
 */

/** Kinds whose list is edited one item a line. */
const LINE_ITEMS = new Set(['string', 'reference', 'enum', 'timezone', 'number', 'date']);
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * @param {FieldKind} kind
 * @returns {Widget}
 */
export function widgetOf(kind) {
  switch (kind.kind) {
    case 'text':
      return 'textarea';
    case 'number':
    case 'boolean':
    case 'timezone':
    case 'reference':
    case 'secret':
    case 'record':
    case 'map':
      return kind.kind;
    case 'enum':
      return 'select';
    case 'list':
      return LINE_ITEMS.has(kind.of.kind) ? 'lines' : 'json';
    default:
      return 'line';
  }
}

/** The fields a form offers: what a body may set (read-only and derived ones are the server's). */
/** @param {FieldDescription[]} fields */
export const editable = (fields) => fields.filter((f) => !f.readOnly && !f.derived);

/**
 * A stored value as its widget's text (records are edited field by field, so never reach here).
 * @param {FieldKind} kind
 * @param {unknown} value
 * @returns {string}
 */
export function toText(kind, value) {
  if (value === null || value === undefined) return '';
  const widget = widgetOf(kind);
  if (widget === 'lines' && Array.isArray(value)) return value.map(String).join('\n');
  if (widget === 'map' && typeof value === 'object') {
    const entries = Object.entries(/** @type {Record<string, unknown>} */ (value));
    return entries.map(([name, v]) => `${name}: ${String(v)}`).join('\n');
  }
  if (widget === 'json') return JSON.stringify(value, null, 2);
  return String(value);
}

/**
 * A widget's text as the JSON value to send: `{ value }`, or `{ problem }` when the text cannot stand for any value
 * (JSON that does not parse, a map line without a name). Empty is null.
 * @param {FieldKind} kind
 * @param {string} text
 * @returns {{ value: unknown, problem?: undefined } | { problem: string, value?: undefined }}
 */
export function fromText(kind, text) {
  const widget = widgetOf(kind);
  const t = widget === 'textarea' || widget === 'json' ? text : text.trim();
  if (t.trim() === '') return { value: null };
  switch (widget) {
    case 'number':
      return { value: NUMBER.test(t) ? Number(t) : t };
    case 'boolean':
      return { value: t === 'true' ? true : t === 'false' ? false : t };
    case 'lines': {
      const items = t.split('\n').flatMap((line) => (line.trim() === '' ? [] : [line.trim()]));
      const item = kind.kind === 'list' ? kind.of : kind;
      return { value: items.map((i) => (item.kind === 'number' && NUMBER.test(i) ? Number(i) : i)) };
    }
    case 'map': {
      /** @type {[string, string][]} */
      const entries = [];
      for (const line of t.split('\n')) {
        if (line.trim() === '') continue;
        const colon = line.indexOf(':');
        if (colon <= 0) return { problem: `each line is "Name: value", not "${line.trim()}"` };
        entries.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
      }
      return { value: Object.fromEntries(entries) };
    }
    case 'json':
      try {
        return { value: JSON.parse(t) };
      } catch (err) {
        return { problem: `is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
      }
    default:
      return { value: t };
  }
}

/**
 * Empty in every way the server stores "nothing": null, missing, "", [] and {} are one.
 * @param {unknown} v
 */
const isEmpty = (v) =>
  v === null ||
  v === undefined ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

/**
 * The same value, object keys in any order, empties alike.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function sameValue(a, b) {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    const la = /** @type {unknown[]} */ (a);
    const lb = /** @type {unknown[]} */ (b);
    return la.length === lb.length && la.every((x, i) => sameValue(x, lb[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ra = /** @type {Record<string, unknown>} */ (a);
    const rb = /** @type {Record<string, unknown>} */ (b);
    const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
    return [...keys].every((k) => sameValue(ra[k], rb[k]));
  }
  return a === b;
}

/**
 * A value as one line of the diff.
 * @param {unknown} v
 */
export const shown = (v) => (isEmpty(v) ? '(empty)' : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * What an edit changes, field by field (a record's fields each on its line, `Http.Url`), for the diff shown before
 * saving. `after` holds the form's values; a secret left empty is unchanged and not in it.
 * @param {FieldDescription[]} fields
 * @param {Record<string, unknown>} before  the object as GET rendered it
 * @param {Record<string, unknown>} after
 * @param {string} [prefix]
 * @returns {{ field: string, before: string, after: string }[]}
 */
export function diff(fields, before, after, prefix = '') {
  /** @type {{ field: string, before: string, after: string }[]} */
  const out = [];
  for (const f of editable(fields)) {
    if (!Object.hasOwn(after, f.name)) continue;
    const b = before?.[f.name];
    const a = after[f.name];
    if (sameValue(b, a)) continue;
    const path = `${prefix}${f.name}`;
    if (f.kind.kind === 'secret') out.push({ field: path, before: '(hidden)', after: '(a new value)' });
    else if (f.kind.kind === 'record' && !isEmpty(a) && !isEmpty(b)) {
      const rb = /** @type {Record<string, unknown>} */ (b);
      const ra = /** @type {Record<string, unknown>} */ (a);
      out.push(...diff(f.kind.fields, rb, ra, `${path}.`));
    } else out.push({ field: path, before: shown(b), after: shown(a) });
  }
  return out;
}

/**
 * The body of the PUT: the top-level fields the edit changed (a record whole, as the form has it), null where a
 * field was emptied.
 * @param {FieldDescription[]} fields
 * @param {Record<string, unknown>} before
 * @param {Record<string, unknown>} after
 */
export function changes(fields, before, after) {
  /** @type {Record<string, unknown>} */
  const body = {};
  for (const f of editable(fields))
    if (Object.hasOwn(after, f.name) && !sameValue(before[f.name], after[f.name])) body[f.name] = after[f.name] ?? null;
  return body;
}

/**
 * The field a 400 message names (`Field "Http.Headers.Accept" must …` → `Http.Headers.Accept`); a key refused in
 * the path (`"GLOBAL.a b" is not a JobDefinition key …`) is the last field of the key, the one typed (its Name).
 * @param {string} message
 * @param {string[]} identity  the fields that make the type's key
 * @returns {string | null}
 */
export function fieldOfMessage(message, identity) {
  const named = /^Field "([^"]+)"/.exec(message)?.[1];
  if (named) return named;
  return /^"[^"]*" is not an? \w+ key/.test(message) ? (identity.at(-1) ?? null) : null;
}

/**
 * The nearest path that has a widget, going up from `path` (`Parameters[2].Name` → `Parameters`).
 * @param {string} path
 * @param {(path: string) => boolean} hasWidget
 * @returns {string | null}
 */
export function widgetPath(path, hasWidget) {
  let p = path;
  while (p) {
    if (hasWidget(p)) return p;
    const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
    if (cut <= 0) return null;
    p = p.slice(0, cut);
  }
  return null;
}

/**
 * The key in the path of an object with these values (its identity fields in order): `GLOBAL.Nightly`, a
 * partition's name, a queue provider's `<process server>.<queue>`. A bare name means GLOBAL, as on the server.
 * @param {TypeDescription} type
 * @param {Record<string, unknown>} values
 */
export function objectKey(type, values) {
  const text = (/** @type {string} */ name) => (typeof values[name] === 'string' ? String(values[name]) : '');
  if (type.key === 'partitioned') return `${text('Partition') || 'GLOBAL'}.${text('Name')}`;
  return type.identity.map(text).join('.');
}

/**
 * The values a copy starts from: the object's editable fields (secrets are never rendered, so never copied) with a
 * new name.
 * @param {TypeDescription} type
 * @param {DefinitionObject} object
 */
export function copyValues(type, object) {
  /** @type {Record<string, unknown>} */
  const values = {};
  for (const f of editable(type.fields)) if (object[f.name] !== undefined) values[f.name] = object[f.name];
  if (typeof values.Name === 'string') values.Name = `${values.Name}_copy`.slice(0, 80);
  return values;
}

/**
 * The body of a create: the fields given (empty ones left out, so the declared defaults apply).
 * @param {Record<string, unknown>} values
 */
export function createBody(values) {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => !isEmpty(v)));
}
