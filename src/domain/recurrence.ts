import { Cron } from 'croner';
import { Temporal } from 'temporal-polyfill';
import { zoneOffsetMs } from '../time/zone.ts';
import { HORIZON_MS, isOpen, nextChange, nextOpening, type WindowSpec } from './time-window.ts';

/**
 * Recurrences (SubmitFrame objects), pure.
 *
 * An `Every` element is a series anchored at an instant: occurrence k is anchor + k·step. Minutes and Hours, and
 * every unit with PreserveTimes false, step in elapsed time (Months then count calendar months in UTC, so the wall
 * clock drifts by an hour across DST like the other absolute steps). Days, Weeks and Months with PreserveTimes step
 * in local wall-clock time from the anchor, computed directly for each k (Jan 31 + 1 month is Feb 29, + 2 months is
 * Mar 31), and each local occurrence maps to exactly one instant by the docs/architecture.md §5 policy: in a spring-forward gap it
 * moves forward to the first valid instant (the end of the gap), in a fall-back overlap it is the earlier instant.
 *
 * A cron expression is read by croner in the frame's zone. Croner already fires a fixed time (`30 2 * * *`) once
 * in a fall-back night and moves it to the end of a spring-forward gap; with `fixedTimeRule: 'no-wildcard'` lists
 * and ranges (`30 1,2 * * *`) count as fixed times too. Croner fires wildcard and step expressions (`*\/20 * * * *`)
 * on both passes of a repeated hour; we drop the second pass, since docs/architecture.md §5 says a recurrence never fires twice
 * for one local occurrence.
 *
 * Every search is bounded: filters (`during`, the job's window) are skipped with nextOpening jumps rather than
 * stepped through, loops stop after MAX_STEPS, and a search that finds nothing within HORIZON_MS of its first
 * candidate answers undefined (never).
 */

export type FrameElement =
  | {
      kind: 'Every';
      every: number;
      unit: 'Minutes' | 'Hours' | 'Days' | 'Weeks' | 'Months';
      preserveTimes: boolean;
      /** 'HH:MM' in the frame's zone, or null. */
      startTime: string | null;
      /** Occurrences outside this window are left out. */
      during?: WindowSpec;
    }
  | { kind: 'WindowOpenings'; window: WindowSpec };

/** A SubmitFrame with its zone decided and its windows resolved. */
export interface FrameSpec {
  zone: string;
  /** No occurrence after this instant. */
  endDate: number | null;
  /** Leave out an occurrence at which the job's own window (`jobWindow` below) is closed. */
  skipWhenClosed: boolean;
  elements: readonly FrameElement[];
  /** Alternative to elements: a cron expression (5 or 6 fields) read in `zone`. */
  cron: string | null;
}

type EveryElement = Extract<FrameElement, { kind: 'Every' }>;

/** Candidates tried per call, over all elements, before giving up (a hostile frame must still answer quickly). */
const MAX_STEPS = 10_000;
/** The last instant the wire format can write (year 9999); nothing later is an occurrence. */
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/**
 * The first occurrence of a recurrence submitted at `submitTime` (>= submitTime), or undefined when it never fires.
 * Its result is the `anchor` of the series.
 */
export function firstOccurrence(frame: FrameSpec, submitTime: number, jobWindow?: WindowSpec): number | undefined {
  const end = endOf(frame);
  const job = jobFilters(frame, jobWindow);
  if (frame.cron !== null) return search([cronCursor(frame.cron, frame.zone, submitTime - 1, end, job)]);
  const cursors: Cursor[] = [];
  for (const el of frame.elements) {
    if (el.kind === 'WindowOpenings') cursors.push(openingCursor(el.window, submitTime - 1, end, job));
    else {
      const own = elementStart(el, frame.zone, submitTime);
      if (own !== undefined) cursors.push(everyCursor(el, frame.zone, own, own - 1, end, withDuring(job, el)));
    }
  }
  return search(cursors);
}

/**
 * The first occurrence strictly after `after` of the series anchored at `anchor`, or undefined when none.
 *
 * With one element the series is exactly anchor + k·step. With several, one anchor cannot tell which element made
 * it, so each Every element restarts from it as if submitted at the anchor (its StartTime on the anchor's local
 * date, stepped forward to the anchor); the anchor itself stays the first occurrence.
 */
export function nextOccurrence(
  frame: FrameSpec,
  anchor: number,
  after: number,
  jobWindow?: WindowSpec,
): number | undefined {
  const end = endOf(frame);
  const job = jobFilters(frame, jobWindow);
  if (frame.cron !== null) return search([cronCursor(frame.cron, frame.zone, after, end, job)]);
  const single = frame.elements.length === 1;
  const cursors: Cursor[] = [];
  for (const el of frame.elements) {
    if (el.kind === 'WindowOpenings') cursors.push(openingCursor(el.window, after, end, job));
    else {
      const own = single ? anchor : elementStart(el, frame.zone, anchor);
      if (own !== undefined) cursors.push(everyCursor(el, frame.zone, own, after, end, withDuring(job, el)));
    }
  }
  return search(cursors);
}

/**
 * The occurrences t with from < t <= to in increasing order, at most `cap` of them (misfire policy "run all"): the
 * same instants as calling nextOccurrence from `from` on.
 */
export function occurrencesBetween(
  frame: FrameSpec,
  anchor: number,
  from: number,
  to: number,
  cap: number,
  jobWindow?: WindowSpec,
): number[] {
  const out: number[] = [];
  let t = from;
  while (out.length < cap) {
    const next = nextOccurrence(frame, anchor, t, jobWindow);
    if (next === undefined || next > to) break;
    out.push(next);
    t = next;
  }
  return out;
}

/** Why a cron expression is unusable (does not parse, or never fires), or undefined when it is fine. */
export function cronProblem(expression: string, zone: string): string | undefined {
  const parts = expression.trim().split(/\s+/).length;
  if (parts !== 5 && parts !== 6) return 'must have five or six fields';
  let job: Cron;
  try {
    job = cronJob(expression, zone);
  } catch (err) {
    return shortMessage(err);
  }
  try {
    // Without a year field an expression that fires once fires again within a 400-year calendar cycle, so
    // searching from 1970 (deterministic, no clock) answers "ever".
    return job.nextRun(new Date(0)) === null ? 'never fires' : undefined;
  } catch (err) {
    return shortMessage(err);
  }
}

// ---------------------------------------------------------------------------------------------
// The search: each element is a cursor over its candidates; the union's next occurrence is found by always checking
// the smallest candidate of all, so no element searches past an answer another one already has.

/** One element's candidates in increasing order. */
interface Cursor {
  /** The current candidate, not yet checked against the filters; undefined when there are no more within limits. */
  t: number | undefined;
  /** Windows an occurrence must fall inside (`during`, the job's window when skipping). */
  filters: readonly WindowSpec[];
  /** Moves `t` to the first candidate >= x (x > t). */
  seek(x: number): void;
}

function search(cursors: readonly Cursor[]): number | undefined {
  for (let i = 0; i < MAX_STEPS; i++) {
    let c: Cursor | undefined;
    for (const d of cursors) if (d.t !== undefined && (c?.t === undefined || d.t < c.t)) c = d;
    if (c?.t === undefined) return undefined;
    const t = c.t;
    const open = admit(c.filters, t);
    if (open === t) return t;
    // Jump past the closed stretch instead of stepping through it.
    if (open === undefined) c.t = undefined;
    else c.seek(open);
  }
  return undefined;
}

function jobFilters(frame: FrameSpec, jobWindow: WindowSpec | undefined): WindowSpec[] {
  return frame.skipWhenClosed && jobWindow ? [jobWindow] : [];
}

const withDuring = (job: WindowSpec[], el: EveryElement): WindowSpec[] => (el.during ? [...job, el.during] : job);

/**
 * `t` when every filter is open at t; else the instant a closed one opens (> t, the earliest worth trying next), or
 * undefined when it does not open within the horizon.
 */
function admit(ws: readonly WindowSpec[], t: number): number | undefined {
  for (const w of ws) if (!isOpen(w, t)) return nextOpening(w, t);
  return t;
}

const endOf = (frame: FrameSpec): number => Math.min(frame.endDate ?? LAST_MS, LAST_MS);

/** The candidate, or undefined past the limit. */
const within = (t: number | undefined, limit: number): number | undefined =>
  t !== undefined && t <= limit ? t : undefined;

// ---------------------------------------------------------------------------------------------
// Every n units.

/** A series: occurrence k (Infinity when it cannot be represented), and the first k whose occurrence is > t. */
interface Series {
  at(k: number): number;
  indexAfter(t: number): number;
}

/** The element's first occurrence when submitted at `r`: r itself, or its StartTime on r's local date stepped to r. */
function elementStart(el: EveryElement, zone: string, r: number): number | undefined {
  if (el.startTime === null) return r;
  const base = toInstant(atTime(localDateTime(r, zone), el.startTime), zone);
  if (base >= r) return finite(base);
  const s = seriesOf(el, zone, base);
  return s ? finite(s.at(s.indexAfter(r - 1))) : undefined;
}

/**
 * The element's series anchored at `own`, from its first occurrence > after. Nothing further than HORIZON_MS past
 * that first candidate: two years of nothing is never.
 */
function everyCursor(
  el: EveryElement,
  zone: string,
  own: number,
  after: number,
  end: number,
  filters: readonly WindowSpec[],
): Cursor {
  const s = seriesOf(el, zone, own);
  if (!s) return { t: undefined, filters, seek: () => {} };
  let k = s.indexAfter(after);
  const first = s.at(k);
  const limit = Math.min(end, first + HORIZON_MS);
  const cursor: Cursor = {
    t: within(first, limit),
    filters,
    seek(x) {
      k = Math.max(k + 1, s.indexAfter(x - 1));
      cursor.t = within(s.at(k), limit);
    },
  };
  return cursor;
}

function seriesOf(el: EveryElement, zone: string, own: number): Series | undefined {
  if (!Number.isInteger(el.every) || el.every < 1) return undefined;
  switch (el.unit) {
    case 'Minutes':
      return absolute(own, el.every * MINUTE);
    case 'Hours':
      return absolute(own, el.every * HOUR);
    case 'Days':
    case 'Weeks': {
      const days = el.unit === 'Weeks' ? 7 * el.every : el.every;
      if (!el.preserveTimes) return absolute(own, days * DAY);
      const origin = originOf(el, zone, own);
      return calendar(own, days * DAY, (k) => toInstant(origin.add({ days: k * days }), zone));
    }
    case 'Months': {
      const n = el.every;
      const approx = n * 2_629_746_000; // mean Gregorian month
      if (!el.preserveTimes) {
        const utc = Temporal.Instant.fromEpochMilliseconds(own).toZonedDateTimeISO('UTC');
        return calendar(own, approx, (k) => guard(() => utc.add({ months: k * n }).epochMilliseconds));
      }
      const origin = originOf(el, zone, own);
      return calendar(own, approx, (k) => toInstant(origin.add({ months: k * n }), zone));
    }
  }
}

/**
 * The local date-time wall-clock steps start from: the anchor's local date at the element's StartTime (so a StartTime
 * moved out of a spring gap on the first day is 02:30 again on the next), else the anchor's local date-time.
 */
function originOf(el: EveryElement, zone: string, own: number): Temporal.PlainDateTime {
  const local = localDateTime(own, zone);
  return el.startTime === null ? local : atTime(local, el.startTime);
}

function absolute(own: number, step: number): Series {
  return {
    at: (k) => own + k * step,
    indexAfter: (t) => (t < own ? 0 : Math.floor((t - own) / step) + 1),
  };
}

/** A series whose steps vary in length (DST, month lengths); `approx` is a typical step for the first guess of k. */
function calendar(own: number, approx: number, step: (k: number) => number): Series {
  // Occurrence 0 is the anchor itself, not its local time mapped back: in an overlap's second pass those differ.
  const at = (k: number): number => (k === 0 ? own : step(k));
  return {
    at,
    indexAfter(t) {
      if (t < own) return 0;
      let k = Math.max(0, Math.floor((t - own) / approx));
      // The guess is off by at most a step or two (DST hours, short months); walk to the exact index.
      while (k > 0 && at(k - 1) > t) k--;
      while (at(k) <= t) k++;
      return k;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// WindowOpenings.

/** The closed → open transitions of `w` after `after`, up to HORIZON_MS ahead. */
function openingCursor(w: WindowSpec, after: number, end: number, filters: readonly WindowSpec[]): Cursor {
  const limit = Math.min(end, after + HORIZON_MS);
  const cursor: Cursor = {
    t: openingAfter(w, after, limit),
    filters,
    seek(x) {
      cursor.t = openingAfter(w, x - 1, limit);
    },
  };
  return cursor;
}

function openingAfter(w: WindowSpec, after: number, limit: number): number | undefined {
  let t = after;
  if (isOpen(w, t)) {
    // It opened at or before t; the next opening comes after it closes.
    const close = nextChange(w, t);
    if (close === undefined || close > limit) return undefined;
    t = close;
  }
  return within(nextChange(w, t), limit);
}

// ---------------------------------------------------------------------------------------------
// Cron.

const CRON_CACHE_SIZE = 256;
const cronCache = new Map<string, Cron>();

/** A paused croner job; cached, since parsing costs more than a nextRun. Throws when the expression is invalid. */
function cronJob(expression: string, zone: string): Cron {
  const key = `${zone} ${expression}`;
  const hit = cronCache.get(key);
  if (hit) return hit;
  const job = new Cron(expression, {
    timezone: zone,
    paused: true,
    mode: '5-or-6-parts',
    fixedTimeRule: 'no-wildcard',
  });
  if (cronCache.size >= CRON_CACHE_SIZE) cronCache.clear();
  cronCache.set(key, job);
  return job;
}

/** The cron's instants after `after`, each local time once, up to HORIZON_MS past the first. */
function cronCursor(
  expression: string,
  zone: string,
  after: number,
  end: number,
  filters: readonly WindowSpec[],
): Cursor {
  let job: Cron;
  try {
    job = cronJob(expression, zone);
  } catch {
    // Refused on save (cronProblem); one stored anyway never fires.
    return { t: undefined, filters, seek: () => {} };
  }
  const first = cronAfter(job, zone, after, end);
  const limit = first === undefined ? end : Math.min(end, first + HORIZON_MS);
  const cursor: Cursor = {
    t: first,
    filters,
    seek(x) {
      cursor.t = cronAfter(job, zone, x - 1, limit);
    },
  };
  return cursor;
}

function cronAfter(job: Cron, zone: string, after: number, limit: number): number | undefined {
  let t = after;
  // A second pass is skipped once per fall-back night, so a few rounds always suffice.
  for (let i = 0; i < 8; i++) {
    const c = job.nextRun(new Date(t))?.getTime();
    if (c === undefined || c > limit) return undefined;
    if (c <= t) {
      t += 1000; // croner works in whole seconds; never let it hold us in place
      continue;
    }
    const repeatEnd = secondPassEnd(c, zone);
    if (repeatEnd === undefined) return c;
    t = repeatEnd - 1;
  }
  return undefined;
}

// Longest fall-back overlap considered; tzdb's are one hour, a few historical ones two.
const MAX_OVERLAP = 3 * HOUR;

/**
 * When `c` is in the second pass of a fall-back overlap (its local time already happened earlier that night), the
 * first instant after the repeated stretch; else undefined.
 */
function secondPassEnd(c: number, zone: string): number | undefined {
  // Cheap screen: a second pass needs the offset to have dropped within the last few hours.
  if (zoneOffsetMs(zone, c - MAX_OVERLAP) <= zoneOffsetMs(zone, c)) return undefined;
  const here = Temporal.Instant.fromEpochMilliseconds(c).toZonedDateTimeISO(zone);
  const earlier = here.toPlainDateTime().toZonedDateTime(zone, { disambiguation: 'earlier' });
  const first = earlier.epochMilliseconds;
  if (first >= c) return undefined;
  // The fall-back lies between the two passes ('previous' from c would miss it when c is the transition itself);
  // the repeated stretch starts there and lasts as long as the clock went back (c - first).
  const fallBack = earlier.getTimeZoneTransition('next');
  return fallBack ? fallBack.epochMilliseconds + (c - first) : undefined;
}

function shortMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const bare = text.replace(/^Cron\w*:\s*/, '');
  const short = bare.length > 120 ? `${bare.slice(0, 117)}...` : bare;
  return short.charAt(0).toLowerCase() + short.slice(1);
}

// ---------------------------------------------------------------------------------------------
// Local time.

function localDateTime(ms: number, zone: string): Temporal.PlainDateTime {
  return Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone).toPlainDateTime();
}

/** `local`'s date at 'HH:MM'. */
function atTime(local: Temporal.PlainDateTime, hhmm: string): Temporal.PlainDateTime {
  const [h, m] = hhmm.split(':').map(Number);
  return local.with({ hour: h ?? 0, minute: m ?? 0, second: 0, millisecond: 0, microsecond: 0, nanosecond: 0 });
}

/**
 * docs/architecture.md §5: a local time in a spring-forward gap moves forward to the first valid instant (the transition, 03:00 in
 * Amsterdam, as croner and the time windows do; parseDate's 'compatible' would say 03:30), an ambiguous one in a
 * fall-back overlap means the earlier instant.
 */
function toInstant(local: Temporal.PlainDateTime, zone: string): number {
  return guard(() => {
    const zoned = local.toZonedDateTime(zone, { disambiguation: 'earlier' });
    if (Temporal.PlainDateTime.compare(zoned.toPlainDateTime(), local) === 0) return zoned.epochMilliseconds;
    // In a gap 'earlier' lands before it by the gap's length (02:30 → 01:30), so the next transition is the gap's end.
    return zoned.getTimeZoneTransition('next')?.epochMilliseconds ?? zoned.epochMilliseconds;
  });
}

/** Temporal throws RangeError past its range; such an occurrence is simply never reached. */
function guard(f: () => number): number {
  try {
    return f();
  } catch (err) {
    if (err instanceof RangeError) return Number.POSITIVE_INFINITY;
    throw err;
  }
}

const finite = (t: number): number | undefined => (Number.isFinite(t) && t <= LAST_MS ? t : undefined);
