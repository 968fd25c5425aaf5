// PostgreSQL array literals for the `unnest` statements (a parameter per column of many rows), made here rather
// than by pg: pg quotes every element through two regular-expression replaces and joins by concatenation, which
// made its serialisation of these parameters the largest allocator of the server's submit path (bench/README.md,
// B1). A string parameter is sent as it is, so the statement receives the same literal.

/** Characters a quoted array element must escape with a backslash (PostgreSQL's array input syntax). */
const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;
/**
 * Characters JSON.stringify writes as escapes of its own (control characters, lone surrogates: a surrogate is
 * tested alone, which also sends a pair the long way). Without them, JSON.stringify quotes a string exactly as an
 * array element is quoted, a backslash before each `"` and `\`, natively: several times faster than the replace
 * on the JSON texts of the `data` column.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds
const JSON_ESCAPES = /[\u0000-\u001f\ud800-\udfff]/;

function quoted(v: string): string {
  if (!NEEDS_ESCAPE.test(v)) return `"${v}"`;
  return JSON_ESCAPES.test(v) ? `"${v.replace(ESCAPED, '\\$&')}"` : JSON.stringify(v);
}

/** A column of values as one array literal: `{1,NULL,"text"}`; numbers bare, strings always quoted. */
export function pgArray(values: readonly (string | number | null | undefined)[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) parts[i] = 'NULL';
    else if (typeof v === 'number') parts[i] = String(v);
    else parts[i] = quoted(v);
  }
  return `{${parts.join(',')}}`;
}

/** One array literal per column of `rows`, in the order of `columns`. */
export const pgColumns = <C extends string, R extends Record<C, string | number | null>>(
  rows: readonly R[],
  columns: readonly C[],
): string[] => columns.map((c) => pgArray(rows.map((r) => r[c])));
