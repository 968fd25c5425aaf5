/**
 * Time zone names and UTC offsets.
 *
 * A zone is an IANA name (`Europe/Amsterdam`, `UTC`, `Etc/GMT+5`) or a fixed offset written
 * `+HH:MM` (what an ISO-8601 input with a numeric offset and no bracketed zone is stored as).
 */
import { Temporal } from 'temporal-polyfill';
import { daysFromCivil, MS_PER_DAY } from './civil.ts';

const MAX_ZONE_LENGTH = 64;
// Cheap screen before asking Temporal/Intl: keeps garbage (and huge strings) away from ICU and the cache.
const ZONE_SHAPE = /^(?:[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*|[+-]\d{2}:\d{2})$/;
const OFFSET_ZONE = /^([+-])(\d{2}):(\d{2})$/;
// Caches are keyed by caller-supplied strings; cap them so a stream of bad names cannot grow memory.
const MAX_CACHED_NAMES = 1000;

const normalized = new Map<string, string | null>();

/**
 * The zone's id with its canonical capitalisation (`europe/amsterdam` → `Europe/Amsterdam`,
 * `+0100` is not accepted, `-00:00` → `+00:00`), or undefined if it is not a zone.
 * Links are kept as given (`Asia/Calcutta` stays `Asia/Calcutta`), as Temporal does.
 */
export function normalizeTimeZone(name: string): string | undefined {
  const hit = normalized.get(name);
  if (hit !== undefined) return hit ?? undefined;
  let result: string | null = null;
  if (name.length <= MAX_ZONE_LENGTH && ZONE_SHAPE.test(name)) {
    try {
      result = new Temporal.ZonedDateTime(0n, name).timeZoneId;
    } catch {
      result = null;
    }
  }
  if (normalized.size >= MAX_CACHED_NAMES) normalized.clear();
  normalized.set(name, result);
  return result ?? undefined;
}

export function isValidTimeZone(name: string): boolean {
  return normalizeTimeZone(name) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Offsets, for formatting. Temporal is far too slow for the per-response path (tens of µs), so:
// fixed offsets are parsed once; IANA zones use one cached Intl.DateTimeFormat each, and the
// offset is memoised per UTC hour. An hour bucket is cached only when the offset at its first and
// last second agree; tzdb never has two transitions within one hour, so that proves it constant.

const HOUR = 3_600_000;
const MAX_CACHED_HOURS = 8192;

interface ZoneEntry {
  fixed: number | undefined;
  dtf: Intl.DateTimeFormat | undefined;
  hours: Map<number, number>;
}

const entries = new Map<string, ZoneEntry>();

/** Offset of local time from UTC, in ms, at instant `ms`. Throws RangeError for an unknown zone. */
export function zoneOffsetMs(zone: string, ms: number): number {
  if (zone === 'UTC') return 0;
  const entry = entries.get(zone) ?? createEntry(zone);
  if (entry.fixed !== undefined) return entry.fixed;
  const dtf = entry.dtf;
  if (dtf === undefined) throw new RangeError(`no formatter for the zone ${zone}`);
  const hour = Math.floor(ms / HOUR);
  const cached = entry.hours.get(hour);
  if (cached !== undefined) return cached;
  const start = hour * HOUR;
  const offset = intlOffset(dtf, start);
  if (intlOffset(dtf, start + HOUR - 1000) !== offset) return intlOffset(dtf, ms);
  if (entry.hours.size >= MAX_CACHED_HOURS) entry.hours.clear();
  entry.hours.set(hour, offset);
  return offset;
}

function createEntry(zone: string): ZoneEntry {
  const m = OFFSET_ZONE.exec(zone);
  let entry: ZoneEntry;
  if (m) {
    const hours = Number(m[2]);
    const minutes = Number(m[3]);
    if (hours > 23 || minutes > 59) throw new RangeError(`unknown time zone "${zone}"`);
    entry = { fixed: (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000, dtf: undefined, hours: new Map() };
  } else {
    if (!isValidTimeZone(zone)) throw new RangeError(`unknown time zone "${zone.slice(0, MAX_ZONE_LENGTH)}"`);
    // 'h23' so midnight is 00 rather than 24; era so years before 1 AD come out right.
    const dtf = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    entry = { fixed: undefined, dtf, hours: new Map() };
  }
  if (entries.size >= MAX_CACHED_NAMES) entries.clear();
  entries.set(zone, entry);
  return entry;
}

/** Offset via Intl: local wall time (to the second) read back as if it were UTC, minus the instant. */
function intlOffset(dtf: Intl.DateTimeFormat, ms: number): number {
  const utcSecondMs = Math.floor(ms / 1000) * 1000;
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let beforeChrist = false;
  for (const part of dtf.formatToParts(utcSecondMs)) {
    switch (part.type) {
      case 'year':
        year = Number(part.value);
        break;
      case 'month':
        month = Number(part.value);
        break;
      case 'day':
        day = Number(part.value);
        break;
      case 'hour':
        hour = Number(part.value) % 24;
        break;
      case 'minute':
        minute = Number(part.value);
        break;
      case 'second':
        second = Number(part.value);
        break;
      case 'era':
        beforeChrist = part.value.startsWith('B');
        break;
      default:
        break;
    }
  }
  if (beforeChrist) year = 1 - year;
  const localMs = daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000;
  return localMs - utcSecondMs;
}
