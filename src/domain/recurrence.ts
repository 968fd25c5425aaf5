import type { WindowSpec } from './time-window.ts';

/**
 * Recurrences (SubmitFrame objects, product §2.1 "Submit frames"), pure. SKELETON: signatures fixed.
 */

export type FrameElement =
  | {
      kind: 'Every';
      every: number;
      unit: 'Minutes' | 'Hours' | 'Days' | 'Weeks' | 'Months';
      preserveTimes: boolean;
      /** 'HH:MM' in the frame's zone, or null. */
      startTime: string | null;
      /** Occurrences outside this window are left out. */
      during?: WindowSpec;
    }
  | { kind: 'WindowOpenings'; window: WindowSpec };

/** A SubmitFrame with its zone decided and its windows resolved. */
export interface FrameSpec {
  zone: string;
  /** No occurrence after this instant. */
  endDate: number | null;
  /** Leave out an occurrence at which the job's own window (`jobWindow` below) is closed. */
  skipWhenClosed: boolean;
  elements: readonly FrameElement[];
  /** Alternative to elements: a cron expression (5 or 6 fields) read in `zone`. */
  cron: string | null;
}

/**
 * The first occurrence of a recurrence submitted at `submitTime` (>= submitTime), or undefined when it never fires.
 * Its result is the `anchor` of the series.
 */
export function firstOccurrence(_frame: FrameSpec, _submitTime: number, _jobWindow?: WindowSpec): number | undefined {
  throw new Error('not implemented');
}

/** The first occurrence strictly after `after` of the series anchored at `anchor`, or undefined when none. */
export function nextOccurrence(
  _frame: FrameSpec,
  _anchor: number,
  _after: number,
  _jobWindow?: WindowSpec,
): number | undefined {
  throw new Error('not implemented');
}

/** Why a cron expression is unusable (does not parse, or never fires), or undefined when it is fine. */
export function cronProblem(_expression: string, _zone: string): string | undefined {
  throw new Error('not implemented');
}
