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
 * Cycles and depth: saving an object only checks that a window does not name itself, so A → B → A can exist. A
 * reference that would close a cycle, or go more than MAX_NESTING windows deep, is treated as no restriction (as if
 * the field were empty) rather than an error: an error here would stop the dispatcher for every job using the
 * window, while dropping the restriction keeps the rest of the definition working and terminates. A reference to a
 * window that no longer exists is treated the same way (references are integrity-checked, so it should not happen).
 */

/** How many EnabledDuring / DisabledDuring levels below the window itself are followed. */
const MAX_NESTING = 8;

/** The window `key` (`Partition.Name`) as a WindowSpec, or undefined when there is no such TimeWindow. */
export async function loadWindow(tx: Store, key: string, fallbackZone: string): Promise<WindowSpec | undefined> {
  return load(tx, key, fallbackZone, []);
}

/** `path`: the keys of the windows that led here, outermost first. */
async function load(tx: Store, key: string, zoneIfNone: string, path: string[]): Promise<WindowSpec | undefined> {
  const object = await tx.getObject('TimeWindow', key);
  if (!object) return undefined;
  const data = object.data;
  const zone = typeof data.TimeZone === 'string' && data.TimeZone !== '' ? data.TimeZone : zoneIfNone;
  const elements = Array.isArray(data.Elements) ? data.Elements.filter(isPlainObject).map(toElement) : [];
  const spec: WindowSpec = { zone, elements };
  const inner = [...path, object.key];
  const enabled = await nested(tx, data.EnabledDuring, zone, inner);
  if (enabled) spec.enabledDuring = enabled;
  const disabled = await nested(tx, data.DisabledDuring, zone, inner);
  if (disabled) spec.disabledDuring = disabled;
  return spec;
}

async function nested(tx: Store, ref: unknown, zone: string, path: string[]): Promise<WindowSpec | undefined> {
  if (typeof ref !== 'string' || ref === '') return undefined;
  // path holds the window itself and its ancestors, so path.length - 1 levels are already nested.
  if (path.includes(ref) || path.length > MAX_NESTING) return undefined;
  return load(tx, ref, zone, path);
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
  };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const zoned = (v: unknown): ZonedMs | null =>
  isPlainObject(v) && typeof v.ms === 'number' && typeof v.zone === 'string' ? { ms: v.ms, zone: v.zone } : null;
