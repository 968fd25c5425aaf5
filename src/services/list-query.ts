import { invalid } from '../errors.ts';
import { NAME_PATTERN } from '../model/fields.ts';
import { parseKey } from '../model/keys.ts';
import { isPlainObject } from '../domain/json.ts';

/**
 * The query parameters every list takes (Limit, After, fields) and the checks of all of them: a parameter a list
 * does not know, one given twice or a bad value is a 400 naming it. Parameter names are matched without regard to
 * case. Pure: no I/O.
 */

/** A query parameter of a list: its name, and the description and schema the OpenAPI document shows. */
export interface ListParam {
  name: string;
  description: string;
  schema?: Record<string, unknown>;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export const PAGE_PARAMS: readonly ListParam[] = [
  {
    name: 'Limit',
    description: `Items per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
  },
  { name: 'After', description: 'The `next` cursor of the previous page' },
  { name: 'fields', description: 'Comma-separated fields of each item to return (any case), e.g. jobId,Status' },
];

/** The values of the known parameters by their declared name; throws 400 on an unknown or repeated one. */
export function readParams(query: unknown, params: readonly ListParam[]): Map<string, string> {
  const byLower = new Map(params.map((p) => [p.name.toLowerCase(), p.name]));
  const values = new Map<string, string>();
  for (const [given, value] of Object.entries(isPlainObject(query) ? query : {})) {
    const name = byLower.get(given.toLowerCase());
    if (name === undefined)
      throw invalid(`Unknown query parameter "${given}"; this list takes ${params.map((p) => p.name).join(', ')}`);
    if (values.has(name) || typeof value !== 'string')
      throw invalid(`Query parameter "${name}" is given more than once`);
    values.set(name, value);
  }
  return values;
}

/** Limit, the decoded After cursor (of the list kind `kind`) and fields. */
export interface Page {
  limit: number;
  after: string | undefined;
  fields: string | undefined;
}

export function readPage(values: ReadonlyMap<string, string>, kind: CursorKind): Page {
  const afterText = values.get('After');
  return {
    limit: readLimit(values),
    after: afterText === undefined || afterText === '' ? undefined : decodeCursor(kind, afterText),
    fields: values.get('fields'),
  };
}

/** The Limit parameter: 1 to MAX_LIMIT, DEFAULT_LIMIT when absent. */
export function readLimit(values: ReadonlyMap<string, string>): number {
  const limitText = values.get('Limit');
  if (limitText === undefined) return DEFAULT_LIMIT;
  const limit = /^[0-9]{1,7}$/.test(limitText.trim()) ? Number(limitText.trim()) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    throw invalid(`Query parameter "Limit" must be a whole number from 1 to ${MAX_LIMIT}`);
  return limit;
}

/**
 * Cursors are opaque to clients: the kind of list and the last item's sort key, base64url-encoded. `j` jobs
 * (jobId), `k` objects in key order (the key), `m` messages and alerts (uniqueId), `a` audit entries (id).
 */
export type CursorKind = 'j' | 'k' | 'm' | 'a';

export const encodeCursor = (kind: CursorKind, value: string | number): string =>
  Buffer.from(`${kind}:${value}`, 'utf8').toString('base64url');

const NUMERIC = /^[1-9][0-9]{0,15}$/;

function decodeCursor(kind: CursorKind, text: string): string {
  const bad = () => invalid('Query parameter "After" is not a cursor this list gave (use the "next" of a page)');
  if (text.length > 600 || !/^[A-Za-z0-9_-]+$/.test(text)) throw bad();
  const decoded = Buffer.from(text, 'base64url').toString('utf8');
  if (!decoded.startsWith(`${kind}:`)) throw bad();
  const value = decoded.slice(2);
  if (kind === 'k' ? value === '' : !NUMERIC.test(value)) throw bad();
  return value;
}

/** The value of `name` split at commas, blanks trimmed and empty entries dropped; undefined when absent. */
export function listValue(values: ReadonlyMap<string, string>, name: string): string[] | undefined {
  const text = values.get(name);
  if (text === undefined) return undefined;
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw invalid(`Query parameter "${name}" is empty`);
  return items;
}

/** Picks each of `items` from `allowed` without regard to case; 400 naming the parameter and the bad value. */
export function oneOf<T extends string>(name: string, items: readonly string[], allowed: readonly T[]): T[] {
  return items.map((item) => {
    const found = allowed.find((a) => a.toLowerCase() === item.toLowerCase());
    if (found === undefined) throw invalid(`Query parameter "${name}": "${item}" is not one of ${allowed.join(', ')}`);
    return found;
  });
}

/** Search text: at most 200 characters, compared lower-cased. */
export function searchValue(values: ReadonlyMap<string, string>): string | undefined {
  const text = values.get('Search');
  if (text === undefined || text.trim() === '') return undefined;
  if (text.length > 200) throw invalid('Query parameter "Search" must be at most 200 characters');
  return text.trim().toLowerCase();
}

/** A page of a list as the JSON interface answers it. */
export interface ListAnswer {
  items: Array<Record<string, unknown>>;
  next: string | null;
}

/** The `Partition` parameter, checked as a partition name. */
export function partitionValue(values: ReadonlyMap<string, string>): string | undefined {
  const partition = values.get('Partition')?.trim();
  if (partition === undefined) return undefined;
  if (!NAME_PATTERN.test(partition))
    throw invalid(`Query parameter "Partition": "${partition}" is not a partition name`);
  return partition;
}

/**
 * The partitions a list reads: those the caller may see (undefined: all), narrowed to the one asked for. One the
 * caller cannot see gives an empty list, exactly as one without objects.
 */
export function partitionsToRead(
  visible: readonly string[] | undefined,
  asked: string | undefined,
): readonly string[] | undefined {
  if (asked === undefined) return visible;
  return visible === undefined || visible.includes(asked) ? [asked] : [];
}

/** Query parameter `name` as the business key `<partition>.<name>` it names (a bare name means GLOBAL), or undefined. */
export function keyValue(values: ReadonlyMap<string, string>, name: string): string | undefined {
  const text = values.get(name);
  if (text === undefined) return undefined;
  const parsed = parseKey('partitioned', text.trim());
  if (!parsed) throw invalid(`Query parameter "${name}": "${text}" is not a business key <partition>.<name>`);
  return parsed.key;
}
