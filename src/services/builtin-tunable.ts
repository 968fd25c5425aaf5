import { isDeepStrictEqual } from 'node:util';

/**
 * Fields of locked built-in objects that may still be changed. How many System jobs GLOBAL.System runs at once is a
 * site's capacity (1,000 when built; JS7 publishes 50,000 parallel tasks per controller, and a System_Sleep costs
 * no process), while what it runs and its queue stay fixed.
 */
const TUNABLE: Readonly<Record<string, readonly string[]>> = {
  'ProcessServer:GLOBAL.System': ['ExecutionSize'],
};

/** Whether `after` differs from the locked object `before` only in fields that may be tuned (none: never). */
export function onlyTunableChanged(
  type: string,
  key: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): boolean {
  const tunable = TUNABLE[`${type}:${key}`];
  if (!tunable) return false;
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].every((n) => tunable.includes(n) || isDeepStrictEqual(before[n], after[n]));
}
