import { type RawBuilder, sql } from 'kysely';

/**
 * Text search and JSON reads written once for both dialects: lists search names and descriptions with LIKE on
 * lower-cased text, and filter messages on fields of their JSON data.
 */

/** A LIKE pattern finding `text` anywhere (lower-cased; `%`, `_` and `\` taken literally). */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** `lower(<expression>) like <pattern> escape '\'`. */
export const likeLower = (expression: RawBuilder<unknown>, pattern: string): RawBuilder<boolean> =>
  sql<boolean>`lower(${expression}) like ${pattern} escape '\\'`;

/** The text of the top-level field `field` of the JSON column `data` (a name from the code, never from input). */
export function jsonText(dialect: 'sqlite' | 'postgres', field: string, table = 'objects'): RawBuilder<string | null> {
  if (!/^[A-Za-z]+$/.test(field)) throw new Error(`not a field name: ${field}`);
  const column = sql.ref(`${table}.data`);
  return dialect === 'postgres'
    ? sql<string | null>`(${column}::jsonb ->> ${sql.lit(field)})`
    : sql<string | null>`json_extract(${column}, ${sql.lit(`$.${field}`)})`;
}

/** jsonText when the field holds a JSON string, else null (a number or an object is not shown as text). */
export function stringField(dialect: 'sqlite' | 'postgres', field: string): RawBuilder<string | null> {
  if (!/^[A-Za-z]+$/.test(field)) throw new Error(`not a field name: ${field}`);
  const column = sql.ref('objects.data');
  return dialect === 'postgres'
    ? sql<
        string | null
      >`(case when jsonb_typeof(${column}::jsonb -> ${sql.lit(field)}) = 'string' then ${column}::jsonb ->> ${sql.lit(field)} end)`
    : sql<
        string | null
      >`(case when json_type(${column}, ${sql.lit(`$.${field}`)}) = 'text' then json_extract(${column}, ${sql.lit(`$.${field}`)}) end)`;
}
