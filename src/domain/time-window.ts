/**
 * Time windows, pure functions of a resolved window and an instant.
 *
 * Model. Every element opens, on each local calendar day D (in the window's zone) that its day restrictions select,
 * one local wall-time interval [D + FromTime + h, D + UntilTime + h) (UntilTime on the next day when the range
 * crosses midnight; h = TimeOffsetHours). The two local ends are turned into instants with docs/architecture.md §5's DST policy
 * and the element is open on the instant interval between them. Working on instant intervals rather than on the
 * wall-clock reading of an instant is what makes the DST days behave:
 * - spring forward: a boundary in the gap moves to the first valid instant (the transition), so a window from 02:30
 *   on 2024-03-31 in Europe/Amsterdam opens at 03:00 CEST, and one that lies wholly inside the gap does not open;
 * - fall back: an ambiguous boundary means the earlier instant, so a window 02:00-02:30 opens once (the first
 *   02:00-02:30), not twice, and a window 01:00-02:30 stays open for exactly 90 minutes of elapsed time.
 * Note: the gap rule is "first valid instant", which is not the `compatible` rule parseDate uses for typed-in dates
 * (02:30 → 03:30); for a window boundary it is the one docs/architecture.md §5 and the R14 reliability test ask for ("runs at 03:00").
 *
 * Calendars (docs/architecture.md §5a): a window's public holidays open it all day like one more element
 * (holidays.ts); FromWorkday / UntilWorkday select working days (workdays.ts); ShiftWhen / ShiftWorkdays move each
 * opening's day (calendar-shift.ts). EnabledDuring / DisabledDuring then apply to the shifted openings.
 *
 * Evaluation never steps per minute: isOpen looks at the few element days around the instant; nextChange builds
 * the merged open intervals of a growing stretch of days (2 days, then 16, 128, ...) until it sees a boundary. Both
 * go through eachOpening, which also finds the openings shifted onto those days from far away, so they agree.
 * Compiled element predicates are cached per WindowSpec object, so a spec must not be mutated after first use.
 */
import { civilFromDays, MS_PER_DAY } from '../time/civil.ts';
import { anchorRange, placedDay, type Shift } from './calendar-shift.ts';
import { isHoliday } from './holidays.ts';
import { normalize, intersect, subtract } from './interval-set.ts';
import { localDay, localToInstant, toLocal } from './local-time.ts';
import { type DayCalendar, MONDAY_TO_FRIDAY, selectsWorkday } from './workdays.ts';
import { itemAt } from './item-at.ts';

export { localToInstant } from './local-time.ts';

/** An instant as stored for `date()` fields. */
export interface ZonedMs {
  ms: number;
  zone: string;
}

/** One element of a TimeWindow object, exactly the registry's field names (null/undefined = not restricted). */
export interface WindowElement {
  FromDate?: ZonedMs | null;
  UntilDate?: ZonedMs | null;
  FromMonth?: number | null;
  UntilMonth?: number | null;
  FromDayOfMonth?: number | null;
  UntilDayOfMonth?: number | null;
  DayOfMonthOffset?: number | null;
  FromWeekday?: string | null;
  UntilWeekday?: string | null;
  WeekdayOffset?: number | null;
  FromTime?: string | null;
  UntilTime?: string | null;
  TimeOffsetHours?: number | null;
  FromWorkday?: number | null;
  UntilWorkday?: number | null;
}

/** A window with its zone decided and its EnabledDuring / DisabledDuring windows resolved. */
export interface WindowSpec {
  /** IANA zone the elements are read in. */
  zone: string;
  elements: readonly WindowElement[];
  /** Open only while this one is open too. */
  enabledDuring?: WindowSpec;
  /** Closed while this one is open. */
  disabledDuring?: WindowSpec;
  /** Also open all day on the public holidays of this code ("NL", "US-NY"). */
  holidays?: string;
  /** The days that count as working days; Monday to Friday when absent. */
  workdays?: WindowSpec;
  /** Openings on a day when this one is open move by `shiftWorkdays` working days (both or neither). */
  shiftWhen?: WindowSpec;
  shiftWorkdays?: number;
}

/** A half-open stretch [start, end) of instants (epoch ms) during which a window is open. */
export interface OpenInterval {
  start: number;
  end: number;
}

/** How far ahead the "next" functions look: a window that does not open within this is Never (docs/architecture.md §6). */
export const HORIZON_MS = 2 * 366 * 86_400_000;

/** A caller's horizon is clamped to this, so every loop stays bounded whatever is passed in. */
const MAX_HORIZON_MS = 10 * 366 * MS_PER_DAY;

const HOUR = 3_600_000;
const WEEKDAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const TIME = /^(\d{2}):(\d{2})(?::(\d{2}))?$/;

// An element's local interval lies within [D - 23 h, D + 71 h) of its day D (FromTime + offset ≥ -23 h; the end is
// at most 24 h after the start, which is < 24 h + 23 h). Zone offsets of the instants involved can differ by up to
// about 26 h (Pacific/Apia skipped a whole day in 2011), so day D can matter to an instant whose local day is
// between D - 3 and D + 4; the day loops below look a little wider and a local-time prefilter keeps them cheap.
const DAYS_BEFORE = 5;
const DAYS_AFTER = 3;
const SLACK_MS = 2 * MS_PER_DAY;

// ---------------------------------------------------------------------------------------------
// Public functions.

/** Whether the window is open at instant `t` (epoch ms). */
export function isOpen(w: WindowSpec, t: number): boolean {
  assertInstant(t);
  return openAt(compile(w), t);
}

/** The first instant > t at which isOpen differs from isOpen(w, t); undefined when none within `horizonMs`. */
export function nextChange(w: WindowSpec, t: number, horizonMs: number = HORIZON_MS): number | undefined {
  assertInstant(t);
  const c = compile(w);
  const limit = t + clampHorizon(horizonMs);
  // Look at a short stretch first (most windows change within a day or two) and widen it only when needed; each
  // pass recomputes from t, which costs at most 1/7 more than knowing the final width up front. Five passes reach
  // MAX_HORIZON_MS (2 · 8^4 days > 10 years); the pass count only makes the bound obvious.
  for (let span = 2 * MS_PER_DAY, pass = 0; pass < 8; span *= 8, pass++) {
    // Intervals are clipped at `to`, so an end at `to` is not a change: `to` is one past the last instant accepted.
    const to = Math.min(t + span, limit + 1);
    const iv = intervalsOf(c, t, to);
    if (iv.length > 0) {
      const start = itemAt(iv, 0);
      const end = itemAt(iv, 1);
      if (start > t) return start; // closed at t, opens at start
      if (end < to) return end; // open at t, closes at end
    }
    if (to > limit) return undefined;
  }
  return undefined;
}

/** t when open at t, else the first instant > t at which it opens; undefined when it does not open within the horizon. */
export function nextOpening(w: WindowSpec, t: number, horizonMs: number = HORIZON_MS): number | undefined {
  assertInstant(t);
  if (openAt(compile(w), t)) return t;
  // Closed at t, so the next change is an opening.
  return nextChange(w, t, horizonMs);
}

/** The end of the window's current opening, or of its next one when it is closed at `t`. */
export function openingEnd(w: WindowSpec, t: number): number | undefined {
  const opens = nextOpening(w, t);
  return opens === undefined ? undefined : nextChange(w, opens);
}

/**
 * The open intervals of the window within [from, to): sorted, disjoint, never touching (touching ones are merged),
 * clipped to [from, to). An interval starting at `from` or ending at `to` may extend beyond it.
 */
export function openIntervals(w: WindowSpec, from: number, to: number): OpenInterval[] {
  assertInstant(from);
  assertInstant(to);
  const out: OpenInterval[] = [];
  if (!(to > from)) return out;
  // Bounded like nextChange: a huge range is cut at the maximum horizon.
  const iv = intervalsOf(compile(w), from, Math.min(to, from + MAX_HORIZON_MS));
  for (let i = 0; i < iv.length; i += 2) out.push({ start: itemAt(iv, i), end: itemAt(iv, i + 1) });
  return out;
}

/** A NaN or infinite instant is a caller's bug; answering "never opens" to it would hide that. */
function assertInstant(t: number): void {
  if (!Number.isFinite(t)) throw new RangeError(`not a finite instant: ${t}`);
}

function clampHorizon(h: number): number {
  if (!(h > 0)) return 0; // also NaN
  return Math.min(Math.floor(h), MAX_HORIZON_MS);
}

// ---------------------------------------------------------------------------------------------
// Compilation: the element fields turned into numbers once per spec.

/** A from-until range over a cyclic or bounded scale, with both ends filled in; `wrap` when From > Until. */
interface Range {
  from: number;
  until: number;
  wrap: boolean;
}

interface CompiledElement {
  /** First and last element day (local day numbers) the date range allows; ±Infinity when open-ended. */
  firstDay: number;
  lastDay: number;
  months: Range | undefined;
  /** Day-of-month range (raw 1-31, clamped to the month's length when evaluated) and its offset in days. */
  daysOfMonth: Range | undefined;
  dayOfMonthOffset: number;
  /** Weekday range, Monday = 0 .. Sunday = 6. */
  weekdays: Range | undefined;
  weekdayOffset: number;
  /** FromWorkday / UntilWorkday counted in `calendar`; absent when neither is set. */
  workdays: { from: number | undefined; until: number | undefined; calendar: DayCalendar } | undefined;
  /** Local ms from the element day's midnight: the interval [start, end), TimeOffsetHours included. */
  start: number;
  end: number;
}

interface Compiled {
  zone: string;
  elements: CompiledElement[];
  holidays: string | undefined;
  shift: Shift | undefined;
  enabled: Compiled | undefined;
  disabled: Compiled | undefined;
}

const compiledSpecs = new WeakMap<WindowSpec, Compiled>();

function compile(w: WindowSpec): Compiled {
  const hit = compiledSpecs.get(w);
  if (hit) return hit;
  const workdays = w.workdays ? windowCalendar(w.workdays, w.zone) : MONDAY_TO_FRIDAY;
  const shift =
    w.shiftWhen && w.shiftWorkdays ? { when: windowCalendar(w.shiftWhen, w.zone), by: w.shiftWorkdays } : undefined;
  const c: Compiled = {
    zone: w.zone,
    elements: w.elements.map((e) => compileElement(e, w.zone, workdays)),
    holidays: w.holidays,
    shift: shift && { ...shift, workdays },
    enabled: w.enabledDuring ? compile(w.enabledDuring) : undefined,
    disabled: w.disabledDuring ? compile(w.disabledDuring) : undefined,
  };
  compiledSpecs.set(w, c);
  return c;
}

function compileElement(e: WindowElement, zone: string, calendar: DayCalendar): CompiledElement {
  const from = e.FromTime == null ? 0 : parseTime(e.FromTime);
  const until = e.UntilTime == null ? MS_PER_DAY : parseTime(e.UntilTime);
  // From >= Until crosses midnight: until the Until time of the next day (equal values: a full 24 hours).
  const end = from < until ? until : until + MS_PER_DAY;
  const shift = (e.TimeOffsetHours ?? 0) * HOUR;
  return {
    firstDay: e.FromDate == null ? Number.NEGATIVE_INFINITY : localDay(zone, e.FromDate.ms),
    lastDay: e.UntilDate == null ? Number.POSITIVE_INFINITY : localDay(zone, e.UntilDate.ms),
    months: range(e.FromMonth, e.UntilMonth, 1, 12),
    // The natural end of a month is its last day; 31 is clamped to it when a day is evaluated.
    daysOfMonth: range(e.FromDayOfMonth, e.UntilDayOfMonth, 1, 31),
    dayOfMonthOffset: e.DayOfMonthOffset ?? 0,
    weekdays: range(weekdayIndex(e.FromWeekday), weekdayIndex(e.UntilWeekday), 0, 6),
    weekdayOffset: e.WeekdayOffset ?? 0,
    workdays:
      e.FromWorkday == null && e.UntilWorkday == null
        ? undefined
        : { from: e.FromWorkday ?? undefined, until: e.UntilWorkday ?? undefined, calendar },
    start: from + shift,
    end: end + shift,
  };
}

/** Both ends null: no restriction. One end null: the scale's natural start or end. From > Until wraps. */
function range(
  from: number | null | undefined,
  until: number | null | undefined,
  min: number,
  max: number,
): Range | undefined {
  if (from == null && until == null) return undefined;
  const f = from ?? min;
  const u = until ?? max;
  return { from: f, until: u, wrap: f > u };
}

function weekdayIndex(name: string | null | undefined): number | undefined {
  if (name == null) return undefined;
  const i = WEEKDAY_NAMES.indexOf(name);
  if (i < 0) throw new RangeError(`not a weekday: "${name}"`);
  return i;
}

/** `HH:MM`, `HH:MM:SS` or `24:00` as ms after midnight. Stored values are validated, so garbage is a bug: throw. */
function parseTime(text: string): number {
  const m = TIME.exec(text);
  const h = Number(m?.[1]);
  const min = Number(m?.[2]);
  const s = Number(m?.[3] ?? 0);
  const ms = ((h * 60 + min) * 60 + s) * 1000;
  if (!m || min > 59 || s > 59 || ms > MS_PER_DAY) throw new RangeError(`not a time of day: "${text}"`);
  return ms;
}

// ---------------------------------------------------------------------------------------------
// Day restrictions.

const civil = { year: 0, month: 0, day: 0 };
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function inRange(r: Range, v: number): boolean {
  return r.wrap ? v >= r.from || v <= r.until : v >= r.from && v <= r.until;
}

/** Whether the day restrictions of `e` select local day `d` (the date range is checked by the callers' loops). */
function selects(e: CompiledElement, d: number): boolean {
  if (e.weekdays) {
    // 1970-01-01 was a Thursday (index 3). Offset k: d is selected when d - k is.
    const wd = (((d - e.weekdayOffset + 3) % 7) + 7) % 7;
    if (!inRange(e.weekdays, wd)) return false;
  }
  if (e.months) {
    civilFromDays(d, civil);
    if (!inRange(e.months, civil.month)) return false;
  }
  if (e.daysOfMonth) {
    civilFromDays(d - e.dayOfMonthOffset, civil);
    const last = daysInMonth(civil.year, civil.month);
    // Past the end of the month means its last day; whether the range wraps was decided on the values as written.
    const r = e.daysOfMonth;
    const from = Math.min(r.from, last);
    const until = Math.min(r.until, last);
    const dom = civil.day;
    if (r.wrap ? !(dom >= from || dom <= until) : !(dom >= from && dom <= until)) return false;
  }
  const w = e.workdays;
  return w === undefined || selectsWorkday(w.calendar, d, w.from, w.until);
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return itemAt(MONTH_DAYS, month - 1);
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

function openAt(c: Compiled, t: number): boolean {
  if (!elementsOpenAt(c, t)) return false;
  if (c.enabled && !openAt(c.enabled, t)) return false;
  if (c.disabled && openAt(c.disabled, t)) return false;
  return true;
}

function elementsOpenAt(c: Compiled, t: number): boolean {
  const lt = toLocal(c.zone, t);
  const day = Math.floor(lt / MS_PER_DAY);
  const contains = (ls: number, le: number) => localToInstant(c.zone, ls) <= t && t < localToInstant(c.zone, le);
  return eachOpening(c, day - DAYS_BEFORE, day + DAYS_AFTER, lt, lt, contains);
}

/**
 * Calls `visit` with the local [start, end) of each opening placed on a local day in [a, b] whose interval comes near
 * local times [lo, hi], until it answers true (then true). An opening is an element's interval on a day it selects,
 * or a public holiday, whole; with shifting it is placed on the day its anchor day moves to, and the anchors looked
 * at are every day that can move into [a, b] (calendar-shift.ts), however far away.
 */
function eachOpening(
  c: Compiled,
  a: number,
  b: number,
  lo: number,
  hi: number,
  visit: (ls: number, le: number) => boolean,
): boolean {
  if (c.elements.length === 0 && c.holidays === undefined) return false;
  const [from, to] = c.shift ? anchorRange(c.shift, a, b) : [a, b];
  const place = (d: number, start: number, end: number): boolean => {
    const p = c.shift ? placedDay(c.shift, d) : d;
    if (p === undefined || p < a || p > b) return false;
    const ls = p * MS_PER_DAY + start;
    const le = p * MS_PER_DAY + end;
    // Cheap local-time test: only a day whose interval is near [lo, hi] can matter.
    return ls <= hi + SLACK_MS && le >= lo - SLACK_MS && visit(ls, le);
  };
  for (const e of c.elements) {
    const last = Math.min(to, e.lastDay);
    for (let d = Math.max(from, e.firstDay); d <= last; d++) {
      // Unshifted, the local-time test is cheaper than the day restrictions, so it comes first.
      if (!c.shift && (d * MS_PER_DAY + e.start > hi + SLACK_MS || d * MS_PER_DAY + e.end < lo - SLACK_MS)) continue;
      if (selects(e, d) && place(d, e.start, e.end)) return true;
    }
  }
  if (c.holidays !== undefined)
    for (let d = from; d <= to; d++) if (isHoliday(c.holidays, d) && place(d, 0, MS_PER_DAY)) return true;
  return false;
}

/**
 * Open intervals of `c` within [from, to) as a flat sorted list [s0, e0, s1, e1, ...]: disjoint, not touching,
 * clipped to [from, to).
 */
function intervalsOf(c: Compiled, from: number, to: number): number[] {
  let iv = elementIntervals(c, from, to);
  if (iv.length > 0 && c.enabled) iv = intersect(iv, intervalsOf(c.enabled, from, to));
  if (iv.length > 0 && c.disabled) iv = subtract(iv, intervalsOf(c.disabled, from, to));
  return iv;
}

/** The union of the openings' intervals within [from, to). */
function elementIntervals(c: Compiled, from: number, to: number): number[] {
  const lFrom = toLocal(c.zone, from);
  const lTo = toLocal(c.zone, to);
  const pairs: number[] = [];
  const day = (local: number) => Math.floor(local / MS_PER_DAY);
  eachOpening(c, day(lFrom) - DAYS_BEFORE, day(lTo) + DAYS_AFTER, lFrom, lTo, (ls, le) => {
    const s = Math.max(localToInstant(c.zone, ls), from);
    const x = Math.min(localToInstant(c.zone, le), to);
    if (s < x) pairs.push(s, x); // empty when clipped away or wholly inside a DST gap
    return false;
  });
  return normalize(pairs);
}

/**
 * The days a window counts as a calendar (working days, or ShiftWhen days) for a window in `zone`: a local day counts
 * when `w` is open at some instant from its midnight to the next (workdays.ts). Keyed by content, so the month
 * caches survive the window being loaded again.
 */
function windowCalendar(w: WindowSpec, zone: string): DayCalendar {
  return {
    key: `${zone} ${JSON.stringify(w)}`,
    days: (first, count) => {
      const bounds = Array.from({ length: count + 1 }, (_, i) => localToInstant(zone, (first + i) * MS_PER_DAY));
      const iv = intervalsOf(compile(w), itemAt(bounds, 0), itemAt(bounds, count));
      const flags = new Uint8Array(count);
      for (let i = 0, j = 0; i < count; i++) {
        while (j < iv.length && itemAt(iv, j + 1) <= itemAt(bounds, i)) j += 2;
        if (j < iv.length && itemAt(iv, j) < itemAt(bounds, i + 1)) flags[i] = 1;
      }
      return flags;
    },
  };
}
