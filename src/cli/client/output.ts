import { stringify } from 'yaml';
import { itemAt } from '../../domain/item-at.ts';

/**
 * How the client prints: an aligned table (or YAML for one object) for people, one JSON document with `-o json` for
 * scripts. Colours only when standard output is a terminal and NO_COLOR is not set (https://no-color.org).
 */

export type Format = 'table' | 'json' | 'yaml';

export function parseFormat(text: string | undefined): Format {
  const f = text ?? 'table';
  if (f !== 'table' && f !== 'json' && f !== 'yaml') throw new Error(`-o ${f}: choose table, json or yaml`);
  return f;
}

export const useColour = (stream: NodeJS.WriteStream = process.stdout, env = process.env): boolean =>
  stream.isTTY === true && !env.NO_COLOR;

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, cyan: 36, grey: 90, bold: 1 } as const;
export type Colour = keyof typeof CODES;

export const paint = (text: string, colour: Colour | undefined, on: boolean): string =>
  on && colour ? `\x1b[${CODES[colour]}m${text}\x1b[0m` : text;

/** The colour of a status word (jobs, process servers, messages, alerts). */
export function statusColour(status: unknown): Colour | undefined {
  switch (status) {
    case 'Completed':
    case 'Running':
    case 'Replied':
    case 'Acknowledged':
      return status === 'Running' ? 'cyan' : 'green';
    case 'Error':
    case 'Killed':
    case 'Unknown':
    case 'Shutdown':
    case 'Never':
      return 'red';
    case 'Held':
    case 'QueueHeld':
    case 'Overdue':
    case 'Console':
    case 'Required':
    case 'Open':
    case 'Escalated':
      return 'yellow';
    case 'Canceled':
    case 'Ignored':
    case 'Skipped':
      return 'grey';
    default:
      return undefined;
  }
}

export interface Column {
  header: string;
  value: (item: Record<string, unknown>) => unknown;
  colour?: (item: Record<string, unknown>) => Colour | undefined;
}

/** Dates of the interface without milliseconds: a table cell need not be that exact. */
const cell = (v: unknown): string => {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'string') return v.replace(/^(\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d),\d{3}/, '$1').replace(/\s+/g, ' ');
  if (Array.isArray(v)) return v.map(cell).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

/** Lines of an aligned table; padding is computed on the plain text, colour added after. */
export function table(
  items: readonly Record<string, unknown>[],
  columns: readonly Column[],
  colour: boolean,
): string[] {
  const rows = items.map((item) => columns.map((c) => cell(c.value(item))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => itemAt(r, i).length)));
  const line = (cells: string[], colours: (Colour | undefined)[]) =>
    cells
      .map((text, i) => {
        const padded = i === cells.length - 1 ? text : text.padEnd(itemAt(widths, i));
        return paint(padded, colours[i], colour);
      })
      .join('  ')
      .trimEnd();
  const head = line(
    columns.map((c) => c.header),
    columns.map(() => 'bold' as const),
  );
  return [
    head,
    ...rows.map((r, n) =>
      line(
        r,
        columns.map((c) => c.colour?.(itemAt(items, n))),
      ),
    ),
  ];
}

export const write = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};

export const printJson = (value: unknown): void => write(JSON.stringify(value, null, 2));

/** A list: a table for people, the items as one JSON array (or YAML) for scripts. */
export function printList(items: Record<string, unknown>[], columns: Column[], format: Format): void {
  if (format === 'json') printJson(items);
  else if (format === 'yaml') write(stringify(items));
  else if (items.length === 0) write('(none)');
  else write(table(items, columns, useColour()).join('\n'));
}

/** One object: YAML for people (it reads like the object), JSON for scripts. */
export function printObject(value: unknown, format: Format): void {
  if (format === 'json') printJson(value);
  else write(stringify(value));
}
