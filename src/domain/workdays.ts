/**
 * Working days of a TimeWindow (its `Workdays` field) and the FromWorkday / UntilWorkday element restriction.
 *
 * Rule: a local day D of the window's zone is a working day when the Workdays window is open at some instant of D
 * (from D's midnight to the next, as instants under docs/architecture.md §5); with no Workdays window, when D is a
 * Monday to Friday. Public holidays do not matter unless the Workdays window excludes them (e.g. DisabledDuring a
 * window with Holidays). The same "open at some instant of the day" rule decides the days of a ShiftWhen window
 * (calendar-shift.ts), so both are a DayCalendar.
 *
 * FromWorkday / UntilWorkday: 1..23 is the n-th working day of D's month, -1..-23 the n-th from its end. A position
 * past the month's working days is clamped to them (23 in a month of 21 is its last, -23 its first), as a day of the
 * month past its end means the last day. D is selected when it is a working day whose position lies from the From
 * position to the Until position; one end alone leaves that end open (the month's first or last working day); a
 * From after the Until selects nothing (there is no wrapping within a month).
 *
 * isOpen runs in every dispatch pass and a window is reloaded for it, so the working days are cached per calendar
 * content (not per object) and month.
 */
import { civilFromDays, daysFromCivil } from '../time/civil.ts';
import { itemAt } from './item-at.ts';

/** The days one calendar counts: working days, or the days a ShiftWhen window is open. */
export interface DayCalendar {
  /** Equal keys count the same days (the window's content and the zone its days are read in). */
  readonly key: string;
  /** One flag per local day of [first, first + count): 1 when the calendar counts it. */
  readonly days: (first: number, count: number) => Uint8Array;
  /** Month index (year · 12 + month - 1) → the counted day numbers of that month, ascending. */
  months?: Map<number, readonly number[]>;
}

/** Monday to Friday: the working days when a window names no Workdays window. */
export const MONDAY_TO_FRIDAY: DayCalendar = {
  key: 'Monday-Friday',
  days: (first, count) => Uint8Array.from({ length: count }, (_, i) => (weekday(first + i) < 5 ? 1 : 0)),
};

/** Monday = 0 .. Sunday = 6 of a day number (1970-01-01 was a Thursday). */
export function weekday(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

const calendars = new Map<string, Map<number, readonly number[]>>();
const MAX_CALENDARS = 256;
// At most 256 calendars × 240 months (twenty years each) of about 22 day numbers: a few MiB at worst.
const MAX_MONTHS = 240;
const civil = { year: 0, month: 0, day: 0 };

/** Month index of a day number. */
export function monthOf(day: number): number {
  civilFromDays(day, civil);
  return civil.year * 12 + civil.month - 1;
}

/** The counted days of month `index`, ascending. */
export function countedDays(cal: DayCalendar, index: number): readonly number[] {
  let months = cal.months;
  if (!months) {
    months = calendars.get(cal.key);
    if (!months) {
      if (calendars.size >= MAX_CALENDARS) calendars.clear();
      months = new Map();
      calendars.set(cal.key, months);
    }
    cal.months = months;
  }
  const hit = months.get(index);
  if (hit) return hit;
  const year = Math.floor(index / 12);
  const month = index - year * 12 + 1;
  const first = daysFromCivil(year, month, 1);
  const next = month === 12 ? daysFromCivil(year + 1, 1, 1) : daysFromCivil(year, month + 1, 1);
  const flags = cal.days(first, next - first);
  const list: number[] = [];
  for (let i = 0; i < flags.length; i++) if (flags[i]) list.push(first + i);
  if (months.size >= MAX_MONTHS) months.clear();
  months.set(index, list);
  return list;
}

/** Whether `cal` counts day `day`. */
export function counts(cal: DayCalendar, day: number): boolean {
  return countedDays(cal, monthOf(day)).includes(day);
}

/** Whether day `day` lies within the FromWorkday / UntilWorkday positions of its month (see the header). */
export function selectsWorkday(
  cal: DayCalendar,
  day: number,
  from: number | undefined,
  until: number | undefined,
): boolean {
  const list = countedDays(cal, monthOf(day));
  const i = list.indexOf(day) + 1; // its position, 0 when it is no working day
  if (i === 0) return false;
  const n = list.length;
  const position = (v: number) => (v > 0 ? Math.min(v, n) : Math.max(n + 1 + v, 1));
  return (from === undefined || i >= position(from)) && (until === undefined || i <= position(until));
}

/**
 * The `n`-th counted day after `day` (before it when n < 0), not counting `day` itself; undefined when there is
 * none within `maxDays` days of `day`.
 */
export function nthCounted(cal: DayCalendar, day: number, n: number, maxDays: number): number | undefined {
  const step = n > 0 ? 1 : -1;
  let left = Math.abs(n);
  const limit = day + step * maxDays;
  for (let m = monthOf(day); ; m += step) {
    const list = countedDays(cal, m);
    const from = step > 0 ? 0 : list.length - 1;
    for (let i = from; i >= 0 && i < list.length; i += step) {
      const d = itemAt(list, i);
      if (step * (d - limit) > 0) return undefined;
      if (step * (d - day) > 0 && --left === 0) return d;
    }
    // The month's first day (going forward) or last day (going back) is already past the limit: stop.
    const edge = step > 0 ? monthStart(m + 1) : monthStart(m) - 1;
    if (step * (edge - limit) > 0) return undefined;
  }
}

function monthStart(index: number): number {
  const year = Math.floor(index / 12);
  return daysFromCivil(year, index - year * 12 + 1, 1);
}
