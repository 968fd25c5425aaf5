import { invalid } from '../errors.ts';
import { DateParseError, parseDate } from '../time/date-format.ts';

/**
 * Dates in query strings, shared by every list or plan that takes a range (job lists, a window's openings, the
 * forecast): the interface's form or ISO-8601, a bad one a 400 naming the parameter.
 */

const DAY_MS = 86_400_000;

/** The instant (epoch ms) of query parameter `name`, or undefined when it is absent. */
export function queryDate(values: ReadonlyMap<string, string>, name: string, defaultZone: string): number | undefined {
  const text = values.get(name)?.trim();
  if (text === undefined) return undefined;
  try {
    // An unencoded `+` of an ISO offset arrives as a blank (form encoding): `…T10:00:00 01:00` means +01:00.
    return parseDate(text.replace(/^(\d{4}-\d{2}-\d{2}T\S+) (\d{2}:?\d{2})$/, '$1+$2'), defaultZone).ms;
  } catch (e) {
    if (e instanceof DateParseError) throw invalid(`Query parameter "${name}": ${e.message}`);
    throw e;
  }
}

/** A half-open range [from, until) */
export interface DateRange {
  from: number;
  until: number;
}

/**
 * The range of query parameters From and Until, both required, Until after From and at most `maxDays` days later
 * (a plan over a longer range would be a long computation on the server for one request).
 */
export function queryRange(values: ReadonlyMap<string, string>, defaultZone: string, maxDays = 366): DateRange {
  const from = queryDate(values, 'From', defaultZone);
  const until = queryDate(values, 'Until', defaultZone);
  if (from === undefined) throw invalid('Query parameter "From" is required');
  if (until === undefined) throw invalid('Query parameter "Until" is required');
  if (!(until > from)) throw invalid('Query parameter "Until" must come after "From"');
  if (until - from > maxDays * DAY_MS) throw invalid(`The range from "From" to "Until" may be at most ${maxDays} days`);
  return { from, until };
}
