/**
 * Instants and days in the browser. The interface writes dates as `2026/12/25 06:00:00,000 Europe/Amsterdam` (a
 * local time and its zone); plans are drawn on a time axis, so they are turned into epoch milliseconds here, with
 * the zone's offset from the browser's own time zone data (Intl). Pure: no I/O.
 */

const WIRE = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2})(?::(\d{2})(?:,(\d{3}))?)?(?: (\S+))?$/;
export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** @type {Map<string, Intl.DateTimeFormat>} */
const formatters = new Map();
/** @param {string} zone */
function formatter(zone) {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * The civil date and time of an instant in a zone: {year, month (1-12), day, hour, minute}.
 * @param {string} zone
 * @param {number} ms
 * @returns {{ year: number, month: number, day: number, hour: number, minute: number }}
 */
export function civilIn(zone, ms) {
  /** @type {Partial<Record<Intl.DateTimeFormatPartTypes, number>>} */
  const parts = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) parts[p.type] = Number(p.value);
  // Intl gives every part the formatter names (NaN only if it did not: an engine bug, not a state to handle).
  const part = (/** @type {Intl.DateTimeFormatPartTypes} */ type) => parts[type] ?? Number.NaN;
  return { year: part('year'), month: part('month'), day: part('day'), hour: part('hour'), minute: part('minute') };
}

/**
 * The zone's offset from UTC at an instant (ms, positive east of Greenwich).
 * @param {string} zone
 * @param {number} ms
 */
function offsetMs(zone, ms) {
  if (zone === 'UTC') return 0;
  const c = civilIn(zone, ms);
  const whole = Math.floor(ms / 1000) * 1000;
  const second = new Date(whole).getUTCSeconds();
  return Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, second) - whole;
}

/**
 * The instant of a local time in a zone, as the server reads it: the earlier one in a fall-back overlap; in a
 * spring-forward gap the time moves on by the gap's length (02:30 → 03:30). The offsets a day before and after are
 * the two a nearby change switches between; each gives a candidate, valid when the zone shows that local time then.
 * @param {string} zone
 * @param {number} year
 * @param {number} month  1-12
 * @param {number} day
 * @returns {number}
 */
export function zonedToMs(zone, year, month, day, hour = 0, minute = 0, second = 0, milli = 0) {
  const local = Date.UTC(year, month - 1, day, hour, minute, second, milli);
  const before = local - offsetMs(zone, local - DAY_MS);
  const after = local - offsetMs(zone, local + DAY_MS);
  const shows = (/** @type {number} */ t) => offsetMs(zone, t) === local - t;
  const beforeShows = shows(before);
  const afterShows = shows(after);
  if (beforeShows && afterShows) return Math.min(before, after);
  if (afterShows) return after;
  return before; // it shows the time, or (in a gap) the time moved on by the gap
}

/**
 * Epoch ms of a date as the interface writes it (or ISO-8601); null when it is not a date.
 * @param {unknown} text
 * @returns {number | null}
 */
export function parseWireDate(text) {
  if (typeof text !== 'string') return null;
  const m = WIRE.exec(text.trim());
  if (!m) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? null : ms;
  }
  const n = (/** @type {number} */ i) => Number(m[i] ?? 0);
  try {
    return zonedToMs(m[8] ?? 'UTC', n(1), n(2), n(3), n(4), n(5), n(6), n(7));
  } catch {
    return null; // a zone this browser does not know
  }
}

/**
 * The zone named in a date as the interface writes it (`UTC` when none).
 * @param {unknown} text
 */
export const zoneOfWire = (text) => WIRE.exec(typeof text === 'string' ? text.trim() : '')?.[8] ?? 'UTC';

/**
 * `2026-12-25` of a civil date.
 * @param {number} year
 * @param {number} month
 * @param {number} day
 */
export const dayKey = (year, month, day) =>
  `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;

/**
 * The days (`YYYY-MM-DD` in `zone`) on which any of the intervals `[{from, until}]` (epoch ms, until exclusive) is
 * open at some moment; an interval whose ends are not dates (null) opens no day.
 * @param {{ from: number | null, until: number | null }[]} intervals
 * @param {string} zone
 */
export function openDays(intervals, zone) {
  /** @type {Set<string>} */
  const days = new Set();
  for (const { from, until } of intervals) {
    if (from === null || until === null || !(until > from)) continue;
    const first = civilIn(zone, from);
    const last = civilIn(zone, until - 1);
    // Walk civil days (noon UTC steps never skip or repeat a day, whatever the zone's DST does).
    let t = Date.UTC(first.year, first.month - 1, first.day, 12);
    const end = Date.UTC(last.year, last.month - 1, last.day, 12);
    for (; t <= end; t += DAY_MS) {
      const d = new Date(t);
      days.add(dayKey(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()));
    }
  }
  return days;
}

/**
 * ISO-8601 in UTC, which every date query parameter accepts.
 * @param {number} ms
 */
export const isoUtc = (ms) => new Date(ms).toISOString();
