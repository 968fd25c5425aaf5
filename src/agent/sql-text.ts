/**
 * The text of a SQL job's script, read as PostgreSQL reads it: statements split at `;` and `:NAME` turned into
 * `$1…$n` query parameters, both only outside string literals ('…', E'…', $tag$…$tag$), quoted identifiers and
 * comments, so a value is always bound and never becomes SQL text. Pure.
 */

/** One statement with its `:NAME` references replaced by `$n`; `names[n-1]` is the parameter `$n` binds. */
export interface BoundStatement {
  text: string;
  names: string[];
}

const IDENT_START = /[A-Za-z_]/;
const IDENT = /[A-Za-z0-9_]/;

/** Where the quoted or commented part starting at `i` ends (the index after it), or undefined when none starts. */
function skipQuoted(sql: string, i: number): number | undefined {
  const c = sql[i];
  const next = sql[i + 1];
  if (c === '-' && next === '-') {
    const end = sql.indexOf('\n', i);
    return end < 0 ? sql.length : end + 1;
  }
  if (c === '/' && next === '*') {
    // PostgreSQL's block comments nest.
    let depth = 0;
    let j = i;
    while (j < sql.length) {
      if (sql[j] === '/' && sql[j + 1] === '*') {
        depth++;
        j += 2;
      } else if (sql[j] === '*' && sql[j + 1] === '/') {
        depth--;
        j += 2;
        if (depth === 0) return j;
      } else j++;
    }
    return sql.length;
  }
  if (c === "'" || c === '"') {
    const escapes = c === "'" && (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !IDENT.test(sql[i - 2] ?? '');
    let j = i + 1;
    while (j < sql.length) {
      if (escapes && sql[j] === '\\') j += 2;
      else if (sql[j] === c && sql[j + 1] === c) j += 2;
      else if (sql[j] === c) return j + 1;
      else j++;
    }
    return sql.length;
  }
  if (c === '$' && !IDENT.test(sql[i - 1] ?? '')) {
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 100));
    if (!tag) return undefined;
    const end = sql.indexOf(tag[0], i + tag[0].length);
    return end < 0 ? sql.length : end + tag[0].length;
  }
  return undefined;
}

/** The script's statements in order, without empty ones; each with its `:NAME` of `known` bound. */
export function parseScript(sql: string, known: ReadonlySet<string>): BoundStatement[] {
  const statements: BoundStatement[] = [];
  let text = '';
  let names: string[] = [];
  const flush = () => {
    if (text.trim() !== '' && !/^(\s|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*$/.test(text)) statements.push({ text, names });
    text = '';
    names = [];
  };
  let i = 0;
  while (i < sql.length) {
    const skipped = skipQuoted(sql, i);
    if (skipped !== undefined) {
      text += sql.slice(i, skipped);
      i = skipped;
      continue;
    }
    const c = sql[i] as string;
    if (c === ';') {
      flush();
      i++;
      continue;
    }
    // `::` is a cast; `:NAME` preceded by an identifier character (array slices `a[1:n]` use digits) is kept.
    if (c === ':' && sql[i + 1] === ':') {
      text += '::';
      i += 2;
      continue;
    }
    if (c === ':' && IDENT_START.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && IDENT.test(sql[j] as string)) j++;
      const name = sql.slice(i + 1, j);
      if (known.has(name)) {
        let n = names.indexOf(name);
        if (n < 0) n = names.push(name) - 1;
        text += `$${n + 1}`;
        i = j;
        continue;
      }
    }
    text += c;
    i++;
  }
  flush();
  return statements;
}

/** One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, quotes doubled; NULL is empty. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s =
    value instanceof Date
      ? value.toISOString()
      : Buffer.isBuffer(value)
        ? `\\x${value.toString('hex')}`
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One CSV record, CRLF-terminated as RFC 4180 writes them. */
export const csvLine = (values: readonly unknown[]): string => `${values.map(csvField).join(',')}\r\n`;
