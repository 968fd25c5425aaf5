import type { Store } from '../store/store.ts';

/**
 * A TimeWindow may not shift by itself or count its working days by itself (docs/architecture.md §5a): saving one is
 * refused when its references lead back to it along a path with at least one Workdays or ShiftWhen link. Circles
 * of EnabledDuring / DisabledDuring alone are left as they were (only a window naming itself is refused, by the
 * registry); the loader cuts any circle that is stored (src/engine/windows.ts).
 */

type Rec = Record<string, unknown>;

const LINKS = ['EnabledDuring', 'DisabledDuring', 'Workdays', 'ShiftWhen'] as const;
const CALENDAR_LINKS: ReadonlySet<string> = new Set(['Workdays', 'ShiftWhen']);
/** One check reads at most this many windows: the walk is bounded whatever is stored. */
const MAX_WINDOWS_READ = 2000;

interface Step {
  key: string;
  /** Whether a Workdays or ShiftWhen link was taken to get here. */
  calendar: boolean;
  /** `A (ShiftWhen) → B …`, for the message. */
  path: string;
  /** The saved window's field the walk left it by. */
  field: string;
}

/** A problem message when saving window `key` with `data` closes such a circle, else undefined. */
export async function checkWindowCircles(tx: Store, key: string, data: Rec): Promise<string | undefined> {
  const seen = new Set<string>();
  const stack: Step[] = [{ key, calendar: false, path: key, field: '' }];
  let reads = 0;
  for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
    const d = at.key === key ? data : (await tx.getObject('TimeWindow', at.key))?.data;
    if (at.key !== key && ++reads > MAX_WINDOWS_READ)
      return `Field "${at.field}": its time windows reach more than ${MAX_WINDOWS_READ} others; this server does not check that many`;
    for (const link of LINKS) {
      const next = d?.[link];
      if (typeof next !== 'string' || next === '') continue;
      const calendar = at.calendar || CALENDAR_LINKS.has(link);
      const path = `${at.path} (${link}) → ${next}`;
      const field = at.field || link;
      if (next === key) {
        if (calendar)
          return `Field "${field}": ${path} is a circle of time windows through Workdays or ShiftWhen; a window may not shift by itself or count its working days by itself`;
        continue;
      }
      const state = `${calendar ? 'c' : '-'}${next}`;
      if (seen.has(state)) continue;
      seen.add(state);
      stack.push({ key: next, calendar, path, field });
    }
  }
  return undefined;
}
