import { intersect } from './interval-set.ts';
import { HORIZON_MS, nextOpening, openIntervals, type WindowSpec } from './time-window.ts';
import { itemAt } from './item-at.ts';

/**
 * When a job that may start at `t` really starts, as far as time windows decide it: the dispatcher
 * (src/engine/window-and-lock-gates.ts for the job's own window, src/engine/dispatcher.ts for its queue's) lets it go
 * at the first pass at which every one of its windows is open, and it wakes at each opening. Pure: the forecast
 * (src/engine/forecast.ts) asks this of the same WindowSpecs the dispatcher loads.
 */

/** Rounds of "wait for the next one to open" before giving up: windows that never overlap would loop for ever. */
const MAX_ROUNDS = 1000;

/** The first instant >= t at which every window is open; undefined when there is none within HORIZON_MS of t. */
export function firstOpenInstant(windows: readonly WindowSpec[], t: number): number | undefined {
  let x = t;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let moved = false;
    for (const w of windows) {
      const opens = nextOpening(w, x);
      if (opens === undefined || opens - t > HORIZON_MS) return undefined;
      if (opens !== x) [x, moved] = [opens, true];
    }
    if (!moved) return x;
  }
  return undefined;
}

/**
 * The end of the last stretch before `t` during which every window is open (the instant after its last open
 * instant), looking back no further than `floor`; undefined when none is open together in [floor, t). Every
 * instant u >= that end has firstOpenInstant(u) >= t, every earlier one (from the stretch on) an answer < t: this
 * is how a series of starts is sought to the first start at or after t without walking from its beginning.
 */
export function lastOpenEnd(windows: readonly WindowSpec[], t: number, floor: number): number | undefined {
  if (windows.length === 0) return t > floor ? t : undefined;
  // Most windows open daily: look one day back first, then eight times further each round.
  for (let span = 86_400_000; ; span *= 8) {
    const from = Math.max(floor, t - span);
    if (!(t > from)) return undefined;
    // As flat [start, end, start, end, …] lists, the form interval-set.ts works on.
    const flat = (w: WindowSpec) => openIntervals(w, from, t).flatMap((i) => [i.start, i.end]);
    let common = flat(itemAt(windows, 0));
    for (const w of windows.slice(1)) common = intersect(common, flat(w));
    if (common.length > 0) return common[common.length - 1];
    if (from === floor || span > HORIZON_MS) return undefined;
  }
}
