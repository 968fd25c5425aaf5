import type { WindowElement, WindowSpec, ZonedMs } from '../domain/time-window.ts';
import { isPlainObject } from '../model/validate.ts';
import type { Store } from '../store/store.ts';

/**
 * Reads TimeWindow objects into WindowSpecs (src/domain/time-window.ts) with EnabledDuring / DisabledDuring
 * resolved.
 *
 * Zones: a window without a TimeZone takes `fallbackZone` (the zone of whatever uses it: queue, job, frame); a
 * window reached through EnabledDuring / DisabledDuring without one takes the zone of the window that names it, since
 * that window is what "uses" it.
 *
 * The same holds for Workdays and ShiftWhen (src/domain/workdays.ts, calendar-shift.ts).
 *
 * Cycles and depth: saving refuses a circle through Workdays or ShiftWhen, but through EnabledDuring / DisabledDuring
 * only a window naming itself, so A → B → A can exist. A reference that would close a cycle, go more than
 * MAX_NESTING windows deep, or pass the MAX_WINDOWS windows one load reads, is treated as no restriction (as if the
 * field were empty; Workdays then means Monday to Friday) rather than an error: an error here would stop the
 * dispatcher for every job using the window, while dropping the restriction keeps the rest of the definition working
 * and terminates. A reference to a window that no longer exists is treated the same way (references are
 * integrity-checked, so it should not happen).
 */

/** How many EnabledDuring / DisabledDuring levels below the window itself are followed. */
const MAX_NESTING = 8;
/** How many windows one load reads at most: four references a window, eight deep, could otherwise be 4^8 reads. */
const MAX_WINDOWS = 64;

/** The windows one load has read so far. */
interface Budget {
  left: number;
}

/** The window `key` (`Partition.Name`) as a WindowSpec, or undefined when there is no such TimeWindow. */
export async function loadWindow(tx: Store, key: string, fallbackZone: string): Promise<WindowSpec | undefined> {
  return load(tx, key, fallbackZone, [], { left: MAX_WINDOWS });
}

/** `path`: the keys of the windows that led here, outermost first. */
async function load(
  tx: Store,
  key: string,
  zoneIfNone: string,
  path: string[],
  budget: Budget,
): Promise<WindowSpec | undefined> {
  if (budget.left-- <= 0) return undefined;
  const object = await tx.getObject('TimeWindow', key);
  if (!object) return undefined;
  const data = object.data;
  const zone = typeof data.TimeZone === 'string' && data.TimeZone !== '' ? data.TimeZone : zoneIfNone;
  const elements = Array.isArray(data.Elements) ? data.Elements.filter(isPlainObject).map(toElement) : [];
  const spec: WindowSpec = { zone, elements };
  const inner = [...path, object.key];
  const ref = (field: 'EnabledDuring' | 'DisabledDuring' | 'Workdays' | 'ShiftWhen') =>
    nested(tx, data[field], zone, inner, budget);
  const enabled = await ref('EnabledDuring');
  if (enabled) spec.enabledDuring = enabled;
  const disabled = await ref('DisabledDuring');
  if (disabled) spec.disabledDuring = disabled;
  if (typeof data.Holidays === 'string' && data.Holidays !== '') spec.holidays = data.Holidays;
  const workdays = await ref('Workdays');
  if (workdays) spec.workdays = workdays;
  const shiftBy = num(data.ShiftWorkdays);
  const shiftWhen = shiftBy ? await ref('ShiftWhen') : undefined;
  if (shiftWhen && shiftBy) {
    spec.shiftWhen = shiftWhen;
    spec.shiftWorkdays = Math.max(-31, Math.min(31, Math.trunc(shiftBy)));
  }
  return spec;
}

async function nested(
  tx: Store,
  ref: unknown,
  zone: string,
  path: string[],
  budget: Budget,
): Promise<WindowSpec | undefined> {
  if (typeof ref !== 'string' || ref === '') return undefined;
  // path holds the window itself and its ancestors, so path.length - 1 levels are already nested.
  if (path.includes(ref) || path.length > MAX_NESTING) return undefined;
  return load(tx, ref, zone, path, budget);
}

/** Copies the element fields with the types the domain expects; anything else counts as not set. */
function toElement(raw: Record<string, unknown>): WindowElement {
  return {
    FromDate: zoned(raw.FromDate),
    UntilDate: zoned(raw.UntilDate),
    FromMonth: num(raw.FromMonth),
    UntilMonth: num(raw.UntilMonth),
    FromDayOfMonth: num(raw.FromDayOfMonth),
    UntilDayOfMonth: num(raw.UntilDayOfMonth),
    DayOfMonthOffset: num(raw.DayOfMonthOffset),
    FromWeekday: str(raw.FromWeekday),
    UntilWeekday: str(raw.UntilWeekday),
    WeekdayOffset: num(raw.WeekdayOffset),
    FromTime: str(raw.FromTime),
    UntilTime: str(raw.UntilTime),
    TimeOffsetHours: num(raw.TimeOffsetHours),
    FromWorkday: num(raw.FromWorkday),
    UntilWorkday: num(raw.UntilWorkday),
  };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const zoned = (v: unknown): ZonedMs | null =>
  isPlainObject(v) && typeof v.ms === 'number' && typeof v.zone === 'string' ? { ms: v.ms, zone: v.zone } : null;
