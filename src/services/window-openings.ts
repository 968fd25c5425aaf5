import { openIntervals } from '../domain/time-window.ts';
import { loadWindow } from '../engine/engine.ts';
import { notFound } from '../errors.ts';
import { parseKey } from '../model/keys.ts';
import { requireType } from '../model/registry.ts';
import type { Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import { queryRange } from './date-range.ts';
import { type ListParam, readParams } from './list-query.ts';
import type { ObjectService } from './objects.ts';

/**
 * `GET /TimeWindow/<key>/openings`: when a window is open within a range, computed by the functions the engine
 * decides with (src/domain/time-window.ts, src/engine/windows.ts), so an operator can check a calendar before the
 * holidays. Dates are written in the window's TimeZone, UTC when it has none.
 */

export const OPENINGS_PARAMS: readonly ListParam[] = [
  { name: 'From', description: 'Start of the range ("YYYY/MM/DD HH:MM:SS,mmm Zone" or ISO-8601), required' },
  { name: 'Until', description: 'End of the range (exclusive), at most 366 days after From, required' },
];

export interface Opening {
  From: string;
  Until: string;
}

export class WindowOpenings {
  private readonly deps: { store: Store; objects: ObjectService; defaultTimeZone: string };

  constructor(deps: { store: Store; objects: ObjectService; defaultTimeZone: string }) {
    this.deps = deps;
  }

  /** The open intervals of window `pathKey` within [From, Until), clipped to it, in order. */
  async openings(principal: Principal, pathKey: string, query: unknown): Promise<{ items: Opening[] }> {
    const type = requireType('TimeWindow');
    // Read as GET reads it: 404 unless the caller may view it, 403 naming a referenced window it may not view.
    await this.deps.objects.getText(principal, type, pathKey);
    const range = queryRange(readParams(query, OPENINGS_PARAMS), this.deps.defaultTimeZone);
    const key = parseKey(type.key, pathKey)?.key ?? pathKey;
    const window = await loadWindow(this.deps.store, key, 'UTC');
    if (!window) throw notFound(type.name, key); // deleted since the read above
    const items = openIntervals(window, range.from, range.until).map((iv) => ({
      From: formatInstant(iv.start, window.zone),
      Until: formatInstant(iv.end, window.zone),
    }));
    return { items };
  }
}
