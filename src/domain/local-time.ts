/**
 * Local wall time of a zone turned into instants under the DST policy of docs/architecture.md §5, for time windows
 * (time-window.ts) and the calendars they count days in (workdays.ts).
 */
import { MS_PER_DAY } from '../time/civil.ts';
import { zoneOffsetMs } from '../time/zone.ts';

/** Local wall time (ms on the local clock since 1970-01-01) of instant `t`. */
export function toLocal(zone: string, t: number): number {
  return zone === 'UTC' ? t : t + zoneOffsetMs(zone, t);
}

/** The local day number (days since 1970-01-01 on the local calendar) of instant `t`. */
export function localDay(zone: string, t: number): number {
  return Math.floor(toLocal(zone, t) / MS_PER_DAY);
}

// Gap boundaries need a search; they recur for every scan over the same DST day, so keep the last few.
const gapCache = new Map<string, number>();
const MAX_GAP_CACHE = 256;

/**
 * The instant of local wall time `local` (ms on the local clock since 1970-01-01) under docs/architecture.md §5: the earlier
 * instant when the local time occurs twice, the first valid instant (the transition) when it falls in a gap.
 */
export function localToInstant(zone: string, local: number): number {
  if (zone === 'UTC') return local;
  // The offsets a day either side are the two a transition near `local` switches between (this assumes no zone
  // changes its offset twice within two days, which tzdb has no example of).
  const before = zoneOffsetMs(zone, local - MS_PER_DAY);
  const after = zoneOffsetMs(zone, local + MS_PER_DAY);
  const tBefore = local - before;
  const tAfter = local - after;
  const validBefore = zoneOffsetMs(zone, tBefore) === before;
  if (before === after && validBefore) return tBefore; // the common case: no transition nearby
  const validAfter = zoneOffsetMs(zone, tAfter) === after;
  if (validBefore && validAfter) return Math.min(tBefore, tAfter); // fall-back overlap: the earlier one
  if (validBefore) return tBefore;
  if (validAfter) return tAfter;
  return gapEnd(zone, local, Math.min(tBefore, tAfter), Math.max(tBefore, tAfter));
}

/** The first instant in (lo, hi] whose local time is at or after `local`: the end of the gap `local` lies in. */
function gapEnd(zone: string, local: number, lo: number, hi: number): number {
  const key = `${zone}|${local}`;
  const hit = gapCache.get(key);
  if (hit !== undefined) return hit;
  // Invariant: lo is before the transition, hi at or after it; about 22 halvings for a one-hour gap.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + zoneOffsetMs(zone, mid) >= local) hi = mid;
    else lo = mid;
  }
  if (gapCache.size >= MAX_GAP_CACHE) gapCache.clear();
  gapCache.set(key, hi);
  return hi;
}
