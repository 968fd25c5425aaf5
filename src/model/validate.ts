import { invalid, MillraceError } from '../errors.ts';
import { DateParseError, parseDate } from '../time/date-format.ts';
import { isValidTimeZone } from '../time/zone.ts';
import { codePointText, NOT_XML_CHAR } from '../domain/characters.ts';
import { isPlainObject } from '../domain/json.ts';
import type { Field, FieldKind, MapKind, TypeName } from './fields.ts';
import { parseKey } from './keys.ts';
import type { Form, ObjectType } from './object-type.ts';

/** Resolves the key shape of a referenced type (the registry passes itself in, keeping this file pure). */
export type KeyShapeOf = (type: TypeName) => ObjectType['key'];

export interface ValidateOptions {
  /** `create` applies defaults and requires required fields; `update` takes any subset. */
  mode: 'create' | 'update';
  /** Zone given to dates written without one. */
  defaultZone: string;
  keyShapeOf: KeyShapeOf;
}

const fail = (path: string, message: string): never => {
  throw invalid(`Field "${path}" ${message}`);
};

const describeNumber = (k: Extract<FieldKind, { kind: 'number' }>): string => {
  const what = k.integer ? 'an integer' : 'a number';
  if (k.min !== undefined && k.max !== undefined) return `${what} from ${k.min} to ${k.max}`;
  if (k.min !== undefined) return `${what} of at least ${k.min}`;
  if (k.max !== undefined) return `${what} of at most ${k.max}`;
  return what;
};

export { isPlainObject } from '../domain/json.ts';

/** Checks one value against its kind and returns it in stored form (dates as {ms, zone}, keys canonical). */
function value(kind: FieldKind, input: unknown, path: string, opts: ValidateOptions): unknown {
  if (input === null) return null;
  switch (kind.kind) {
    case 'string':
    case 'text':
    case 'secret': {
      if (typeof input !== 'string') return fail(path, 'must be a string');
      if (input.length > kind.maxLength) return fail(path, `must be at most ${kind.maxLength} characters`);
      const unstorable = NOT_XML_CHAR.exec(input);
      if (unstorable) return fail(path, `must not hold the control character ${codePointText(unstorable[0])}`);
      if (kind.kind === 'string' && /[\r\n]/.test(input)) return fail(path, 'must be a single line');
      if (kind.kind === 'string' && kind.pattern && !kind.pattern.test(input))
        return fail(path, `must consist of ${kind.patternText}`);
      return input;
    }
    case 'number': {
      if (typeof input !== 'number' || !Number.isFinite(input)) return fail(path, `must be ${describeNumber(kind)}`);
      if (kind.integer && !Number.isSafeInteger(input)) return fail(path, `must be ${describeNumber(kind)}`);
      if ((kind.min !== undefined && input < kind.min) || (kind.max !== undefined && input > kind.max))
        return fail(path, `must be ${describeNumber(kind)}`);
      return input;
    }
    case 'boolean':
      return typeof input === 'boolean' ? input : fail(path, 'must be true or false');
    case 'enum':
      return typeof input === 'string' && kind.values.includes(input)
        ? input
        : fail(path, `must be one of ${kind.values.join(', ')}`);
    case 'timezone':
      return typeof input === 'string' && input.length <= 64 && isValidTimeZone(input)
        ? input
        : fail(path, 'must be a time zone name such as Europe/Amsterdam');
    case 'date': {
      if (typeof input !== 'string') return fail(path, 'must be a date written as a string');
      try {
        return parseDate(input, opts.defaultZone);
      } catch (e) {
        const why = e instanceof DateParseError ? ` (${e.message})` : '';
        return fail(path, `must be a date "YYYY/MM/DD HH:MM:SS,mmm <time zone>" or ISO-8601${why}`);
      }
    }
    case 'reference': {
      const shape = opts.keyShapeOf(kind.type);
      const parsed = typeof input === 'string' ? parseKey(shape, input) : undefined;
      if (!parsed) {
        const form = shape === 'queueProvider' ? '<ps_partition>.<ps_name>.<partition>.<queue>' : '<partition>.<name>';
        return fail(path, `must be the business key ${form} of a ${kind.type}`);
      }
      return parsed.key;
    }
    case 'record': {
      if (!isPlainObject(input)) return fail(path, 'must be an object');
      return fields(kind.fields, input, path, { ...opts, mode: 'create' });
    }
    case 'scalar': {
      if (typeof input === 'number' && Number.isFinite(input)) return input;
      if (typeof input !== 'string') return fail(path, 'must be a string or a number');
      return value({ kind: 'text', maxLength: kind.maxLength }, input, path, opts);
    }
    case 'map':
      return mapValue(kind, input, path, opts);
    case 'list': {
      if (kind.single && !Array.isArray(input)) input = [input];
      if (!Array.isArray(input)) return fail(path, 'must be a list');
      if (input.length > kind.maxItems) return fail(path, `must hold at most ${kind.maxItems} items`);
      return input.map((item, i) => {
        const v = namingItem(kind.of, item, () => value(kind.of, item, `${path}[${i}]`, opts));
        return v === null ? fail(`${path}[${i}]`, 'must not be null') : v;
      });
    }
  }
}

/**
 * A map's entries checked one by one. The result is built by Object.fromEntries, which defines each name as an own
 * property: a name such as `__proto__` or `constructor` is stored as a name, never a change of prototype.
 */
function mapValue(kind: MapKind, input: unknown, path: string, opts: ValidateOptions): Record<string, string> {
  if (!isPlainObject(input)) return fail(path, 'must be an object of names and text values');
  const entries = Object.entries(input);
  if (entries.length > kind.maxEntries) return fail(path, `must hold at most ${kind.maxEntries} entries`);
  const seen = new Set<string>();
  const line: FieldKind = { kind: 'string', maxLength: kind.valueMaxLength };
  return Object.fromEntries(
    entries.map(([name, v]) => {
      const at = `${path}.${name.slice(0, 80)}`;
      if (name.length > kind.keyMaxLength || !kind.keyPattern.test(name))
        fail(at, `is not a valid name: names must consist of ${kind.keyPatternText}, at most ${kind.keyMaxLength}`);
      if (seen.has(name.toLowerCase())) fail(at, 'is given twice (names are compared ignoring case)');
      seen.add(name.toLowerCase());
      if (typeof v !== 'string') fail(at, 'must be a string');
      return [name, String(value(line, v, at, opts))];
    }),
  );
}

/** Runs `check` on a list item; a refusal of a named item (a parameter) also says which it is: `(Name "Text")`. */
function namingItem<T>(kind: FieldKind, item: unknown, check: () => T): T {
  const named = kind.kind === 'record' ? kind.named : undefined;
  const label = named !== undefined && isPlainObject(item) ? item[named] : undefined;
  if (typeof label !== 'string') return check();
  try {
    return check();
  } catch (e) {
    if (e instanceof MillraceError && e.status === 400)
      throw invalid(`${e.message} (${named} ${JSON.stringify(label.slice(0, 80))})`);
    throw e;
  }
}

/** Validates an object body against a field list. `prefix` names nested fields as `Parameters[0].Name`. */
function fields(
  list: readonly Field[],
  body: Record<string, unknown>,
  prefix: string,
  opts: ValidateOptions,
): Record<string, unknown> {
  const at = (n: string): string => (prefix ? `${prefix}.${n}` : n);
  const known = new Map(list.map((f) => [f.name, f]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const f = known.get(k);
    if (!f) return fail(at(k), 'is not a field of this object');
    if (f.readOnly) return fail(at(k), 'is read-only');
    if (f.derived) continue; // shown on output, ignored on input
    out[k] = value(f.kind, v, at(k), opts);
  }
  if (opts.mode === 'create') {
    for (const f of list) {
      // Read-only fields start at their default (a process server's Status, an alert source's Enabled).
      if (f.readOnly && f.default !== undefined) out[f.name] = f.default;
      if (f.readOnly || f.derived) continue;
      if (out[f.name] === undefined) out[f.name] = f.default ?? null;
      if (f.required && out[f.name] === null) fail(at(f.name), 'is required');
    }
  }
  return out;
}

/**
 * Validates a request body for an object of `type`. Identity fields are checked by the caller against the path.
 * Returns the fields in stored form; on `create` every writable field is present (null when unset).
 * Throws a 400 MillraceError naming the first bad field.
 */
export function validateObjectBody(type: ObjectType, body: unknown, opts: ValidateOptions): Record<string, unknown> {
  if (!isPlainObject(body)) throw invalid('The body must be a JSON object');
  const writable = type.fields.filter((f) => !type.identity.includes(f.name));
  const identityValues: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (type.identity.includes(k)) identityValues[k] = v;
    else rest[k] = v;
  }
  // Identity fields are validated for shape first (a body naming its object wrongly is told so before anything
  // else); matching them to the path is the caller's job.
  const identity: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(identityValues)) {
    const f = type.byName.get(k);
    if (f) identity[k] = value(f.kind, v, k, opts);
  }
  return { ...fields(writable, rest, '', opts), ...identity };
}

/**
 * Validates a request body of one of a type's forms (docs/architecture.md §12: a Job's submit, process-properties
 * and completion bodies, an event's comment, a reply). No body is an empty one; a field is optional unless the form
 * declares it required; an unknown field is refused by name.
 * Returns the given fields in stored form (dates as {ms, zone}, keys canonical), null kept as null.
 */
export function validateForm(form: Form, body: unknown, opts: Omit<ValidateOptions, 'mode'>): Record<string, unknown> {
  if (body === undefined || body === null) body = {};
  if (!isPlainObject(body)) throw invalid('The body must be a JSON object');
  for (const k of Object.keys(body)) if (!form.byName.has(k)) throw invalid(`Unknown field "${k}"`);
  const out = fields(form.fields, body, '', { ...opts, mode: 'update' });
  for (const f of form.fields)
    if (f.required && (out[f.name] === undefined || out[f.name] === null)) fail(f.name, 'is required');
  return out;
}

/** Runs the type's cross-field rules on a complete value. */
export function checkRules(type: ObjectType, complete: Record<string, unknown>): void {
  const problem = type.rules?.(complete);
  if (problem) throw invalid(problem);
}

/** Every reference held by a stored value: [field path, referenced type, canonical key]. */
export function collectReferences(
  list: readonly Field[],
  data: Record<string, unknown>,
): Array<{ path: string; type: TypeName; key: string }> {
  const found: Array<{ path: string; type: TypeName; key: string }> = [];
  const walk = (kind: FieldKind, v: unknown, path: string): void => {
    if (v === null || v === undefined) return;
    if (kind.kind === 'reference' && typeof v === 'string') found.push({ path, type: kind.type, key: v });
    else if (kind.kind === 'record' && isPlainObject(v))
      for (const f of kind.fields) walk(f.kind, v[f.name], `${path}.${f.name}`);
    else if (kind.kind === 'list' && Array.isArray(v))
      for (const [i, item] of v.entries()) walk(kind.of, item, `${path}[${i}]`);
  };
  for (const f of list) walk(f.kind, data[f.name], f.name);
  return found;
}
