/**
 * Time windows (product §2.3), pure. SKELETON: signatures fixed, bodies to be written.
 */

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
}

/** How far ahead the "next" functions look: a window that does not open within this is Never (DESIGN / issue 4). */
export const HORIZON_MS = 2 * 366 * 86_400_000;

/** Whether the window is open at instant `t` (epoch ms). */
export function isOpen(_w: WindowSpec, _t: number): boolean {
  throw new Error('not implemented');
}

/** The first instant > t at which isOpen differs from isOpen(w, t); undefined when none within `horizonMs`. */
export function nextChange(_w: WindowSpec, _t: number, _horizonMs: number = HORIZON_MS): number | undefined {
  throw new Error('not implemented');
}

/** t when open at t, else the first instant > t at which it opens; undefined when it does not open within the horizon. */
export function nextOpening(_w: WindowSpec, _t: number, _horizonMs: number = HORIZON_MS): number | undefined {
  throw new Error('not implemented');
}
