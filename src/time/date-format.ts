/**
 * Millrace's wire format for dates: `YYYY/MM/DD HH:MM:SS,mmm <zone>`, e.g.
 * `2026/11/21 09:30:00,000 Europe/Amsterdam`. Output always uses it; input also accepts ISO-8601.
 *
 * DST policy for local times (inputs without an offset):
 * - In a spring-forward gap the time moves forward by the length of the gap
 *   (2024-03-31 02:30 Europe/Amsterdam → 03:30 CEST = 01:30Z).
 * - In a fall-back overlap it means the earlier of the two instants
 *   (2024-10-27 02:30 Europe/Amsterdam → 02:30 CEST = 00:30Z).
 * Both are Temporal's `disambiguation: 'compatible'` (the same rule as RFC 5545 and Date), so that
 * is what we pass. The Millrace form carries no offset, so the later instant of an overlap does not
 * survive a format → parse round trip; ISO input with an offset can still name it exactly.
 */
import { Temporal } from 'temporal-polyfill';
import { civilFromDays, MS_PER_DAY } from './civil.ts';
import { normalizeTimeZone, zoneOffsetMs } from './zone.ts';

/** An instant plus the zone it was given in, which is also the zone it is shown in. */
export interface ZonedInstant {
  ms: number;
  zone: string;
}

export class DateParseError extends Error {
  constructor(message = `not a valid date: expected "YYYY/MM/DD HH:MM:SS,mmm <time zone>" or ISO-8601`) {
    super(message);
    this.name = 'DateParseError';
  }
}

// Years are always four digits on the wire, so this is the representable range.
const MIN_YEAR = 1;
const MAX_YEAR = 9999;

// ---------------------------------------------------------------------------------------------
// Formatting: on the hot path of every GET, so arithmetic only (see zone.ts for the offset cache).

const civil = { year: 0, month: 0, day: 0 };

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);
const pad4 = (n: number): string => (n < 1000 ? `0${pad3(n)}` : `${n}`);

/** `2026/11/21 09:30:00,000 Europe/Amsterdam`. Throws RangeError for an unknown zone or a year outside 1-9999. */
export function formatInstant(ms: number, zone: string): string {
  if (!Number.isFinite(ms)) throw new RangeError(`not a finite instant: ${ms}`);
  const instant = Math.floor(ms);
  const local = zone === 'UTC' ? instant : instant + zoneOffsetMs(zone, instant);
  const days = Math.floor(local / MS_PER_DAY);
  let rest = local - days * MS_PER_DAY;
  civilFromDays(days, civil);
  if (civil.year < MIN_YEAR || civil.year > MAX_YEAR) throw new RangeError(`year ${civil.year} cannot be formatted`);
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${pad4(civil.year)}/${pad2(civil.month)}/${pad2(civil.day)} ${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)},${pad3(millis)} ${zone}`;
}

/** Checks the zone and the instant; the zone comes back in its canonical capitalisation. */
export function toZonedInstant(ms: number, zone: string): ZonedInstant {
  const normal = normalizeTimeZone(zone);
  if (normal === undefined) throw new RangeError(`unknown time zone "${zone.slice(0, 64)}"`);
  if (!Number.isFinite(ms)) throw new RangeError(`not a finite instant: ${ms}`);
  return { ms: Math.floor(ms), zone: normal };
}

// ---------------------------------------------------------------------------------------------
// Parsing.

// Longest legal input is ~30 chars plus a zone name (≤ 64); anything longer is rejected unread.
const MAX_INPUT_LENGTH = 100;
// 2026/11/21 09:30[:00[,000]][ <zone>]
const MILLRACE = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2})(?::(\d{2})(?:,(\d{3}))?)?(?: ([^ ]+))?$/;
// 2026-11-21[(T| )09:30[:00[.123456789]][Z|+01:00|+0100]][[Europe/Amsterdam]]
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?(?:\[([^[\]]+)\])?$/;

interface LocalFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/**
 * Parses the Millrace form or ISO-8601. Inputs without a zone or offset are local time in
 * `defaultZone`. Fractions finer than a millisecond are truncated. Throws DateParseError.
 */
export function parseDate(text: string, defaultZone: string): ZonedInstant {
  if (text.length > MAX_INPUT_LENGTH) throw new DateParseError();
  const m = MILLRACE.exec(text);
  if (m) {
    const zone = m[8] === undefined ? zoneOrThrow(defaultZone) : zoneOrFail(m[8]);
    return { ms: resolveLocal(fields(m), zone, undefined, text), zone };
  }
  const i = ISO.exec(text);
  if (!i) throw new DateParseError();
  const offsetText = i[8];
  const bracketZone = i[9] === undefined ? undefined : zoneOrFail(i[9]);
  const local = fields(i);
  if (offsetText === undefined) {
    const zone = bracketZone ?? zoneOrThrow(defaultZone);
    return { ms: resolveLocal(local, zone, undefined, text), zone };
  }
  if (offsetText === 'Z' || offsetText === 'z') {
    // `Z` names an exact instant; a bracketed zone only says how to show it (RFC 9557).
    const ms = resolveLocal(local, 'UTC', undefined, text);
    if (bracketZone !== undefined) assertFormattable(ms, bracketZone, text);
    return { ms, zone: bracketZone ?? 'UTC' };
  }
  const offset = offsetText.includes(':') ? offsetText : `${offsetText.slice(0, 3)}:${offsetText.slice(3)}`;
  if (bracketZone !== undefined) {
    // Both given: the offset picks the instant, and must be one the zone actually has then.
    return { ms: resolveLocal(local, bracketZone, offset, text), zone: bracketZone };
  }
  const offsetZone = zoneOrFail(offset);
  return { ms: resolveLocal(local, offsetZone, undefined, text), zone: offsetZone };
}

function fields(m: RegExpExecArray): LocalFields {
  const fraction = m[7] ?? '';
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    millisecond: Number(fraction.slice(0, 3).padEnd(3, '0')),
  };
}

function zoneOrFail(name: string): string {
  const zone = normalizeTimeZone(name);
  if (zone === undefined) throw new DateParseError(`not a valid date: unknown time zone "${name}"`);
  return zone;
}

// The default zone comes from configuration, not from the request: a bad one is a programming error.
function zoneOrThrow(name: string): string {
  const zone = normalizeTimeZone(name);
  if (zone === undefined) throw new RangeError(`unknown default time zone "${name.slice(0, 64)}"`);
  return zone;
}

// Shown in another zone, an instant near year 1 or 9999 can land outside the four-digit range.
function assertFormattable(ms: number, zone: string, text: string): void {
  try {
    formatInstant(ms, zone);
  } catch {
    throw new DateParseError(`not a valid date: year out of range in "${text}"`);
  }
}

function resolveLocal(local: LocalFields, zone: string, offset: string | undefined, text: string): number {
  if (local.year < MIN_YEAR || local.year > MAX_YEAR)
    throw new DateParseError(`not a valid date: year out of range in "${text}"`);
  let zoned: Temporal.ZonedDateTime;
  try {
    zoned = Temporal.ZonedDateTime.from(
      { ...local, timeZone: zone, ...(offset === undefined ? {} : { offset }) },
      { overflow: 'reject', disambiguation: 'compatible', offset: 'reject' },
    );
  } catch {
    throw new DateParseError(
      offset === undefined
        ? `not a valid date: no such date or time "${text}"`
        : `not a valid date: offset ${offset} is not valid in ${zone} at "${text}"`,
    );
  }
  return zoned.epochMilliseconds;
}
