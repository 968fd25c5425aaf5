/**
 * Calendar shifting of a TimeWindow (`ShiftWhen`, `ShiftWorkdays`), as the product has it: "if an open day falls in
 * window X, shift it n open days in window Y".
 *
 * Each opening of a window is anchored on a local day D of its zone: an element's interval on a day its restrictions
 * select, or a public holiday (the whole day). When ShiftWhen is open at some instant of D (the rule of workdays.ts),
 * the opening is placed instead on the ShiftWorkdays-th working day after D (before D when negative, D itself not
 * counted), working days as the window's Workdays count them, with the same time of day; otherwise it stays on D.
 * An opening is shifted once: landing on another ShiftWhen day does not move it again. When there is no such working
 * day within MAX_SHIFT_DAYS of D, that opening is dropped. EnabledDuring / DisabledDuring apply after shifting, to
 * the instants of the shifted openings (time-window.ts).
 */
import { type DayCalendar, counts, nthCounted } from './workdays.ts';

/** How far (days) an opening may move; a working day farther away does not exist for shifting. */
export const MAX_SHIFT_DAYS = 366;

export interface Shift {
  /** The days on which openings move. */
  when: DayCalendar;
  /** Working days to move by, -31..31 and not 0. */
  by: number;
  /** The working days counted. */
  workdays: DayCalendar;
}

/** The day an opening anchored on `day` is placed on; undefined when it is dropped. */
export function placedDay(s: Shift, day: number): number | undefined {
  return counts(s.when, day) ? nthCounted(s.workdays, day, s.by, MAX_SHIFT_DAYS) : day;
}

/**
 * The anchor days [lo, hi] whose openings can be placed on a day in [a, b]. Moving forward by n: an anchor D places
 * at or after a exactly when fewer than n working days lie strictly between D and a, so D is at least the n-th
 * working day before a (or a - MAX_SHIFT_DAYS when there is none that close); it is never placed before itself, so
 * D <= b. Backwards mirrors this. The bound is what lets isOpen and openIntervals see openings from far away.
 */
export function anchorRange(s: Shift, a: number, b: number): [number, number] {
  if (s.by > 0) return [nthCounted(s.workdays, a, -s.by, MAX_SHIFT_DAYS) ?? a - MAX_SHIFT_DAYS, b];
  return [a, nthCounted(s.workdays, b, -s.by, MAX_SHIFT_DAYS) ?? b + MAX_SHIFT_DAYS];
}
