import { cronProblem } from '../../domain/recurrence.ts';
import { bool, date, field, int, list, oneOf, record, ref, string, timezone } from '../fields.ts';
import type { ValueOf } from '../field-values.ts';
import { defineType } from '../object-type.ts';

/**
 * A recurrence: either elements, each `Every` n units or `WindowOpenings` (every
 * opening of a time window), or one cron expression. The job submits at the union of the elements' instants.
 */
export const FRAME_UNITS = ['Minutes', 'Hours', 'Days', 'Weeks', 'Months'] as const;

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
/** Five fields (minute hour day month weekday) or six (seconds first); checked fully by the cron parser. */
const CRON = /^\s*[0-9A-Za-z*?,/#LW-]+(\s+[0-9A-Za-z*?,/#LW-]+){4,5}\s*$/;

const element = record(
  field('Kind', oneOf('Every', 'WindowOpenings'), { default: 'Every' }),
  field('Every', int(1, 100_000), { description: 'Every this many Units (Kind Every).' }),
  field('Unit', oneOf(...FRAME_UNITS), { description: 'Kind Every.' }),
  field('PreserveTimes', bool(), {
    default: true,
    description: 'Keep the wall-clock time across DST changes (Kind Every).',
  }),
  field('StartTime', string(5, HH_MM, 'a 24-hour time HH:MM'), { description: 'Time of day of the first submit.' }),
  field('DuringTimeWindow', ref('TimeWindow'), { description: 'Instants outside this window are left out.' }),
  field('TimeWindow', ref('TimeWindow'), { description: 'Kind WindowOpenings: submit at each opening.' }),
);

type Element = ValueOf<typeof element>;

function rules(v: {
  Elements?: Element[] | null;
  CronExpression?: string | null;
  TimeZone?: string | null;
}): string | undefined {
  const elements = v.Elements ?? [];
  const cron = v.CronExpression !== null && v.CronExpression !== undefined;
  if (cron && elements.length > 0) return 'Field "CronExpression" cannot be combined with Elements';
  if (!cron && elements.length === 0)
    return 'Field "Elements" must hold at least one element, or give a CronExpression';
  if (cron) {
    // The pattern above only checks the shape; whether it parses and ever fires needs the cron parser itself.
    const zone = typeof v.TimeZone === 'string' && v.TimeZone !== '' ? v.TimeZone : 'UTC';
    const problem = cronProblem(String(v.CronExpression), zone);
    if (problem !== undefined) return `Field "CronExpression": ${problem}`;
  }
  for (const [i, e] of elements.entries()) {
    const at = `Elements[${i}]`;
    const need: Array<keyof Element> = e.Kind === 'Every' ? ['Every', 'Unit'] : ['TimeWindow'];
    const refuse: Array<keyof Element> = e.Kind === 'Every' ? ['TimeWindow'] : ['Every', 'Unit', 'StartTime'];
    for (const f of need)
      if (e[f] === null || e[f] === undefined) return `Field "${at}.${f}" is required for Kind ${e.Kind}`;
    for (const f of refuse)
      if (e[f] !== null && e[f] !== undefined) return `Field "${at}.${f}" does not apply to Kind ${e.Kind}`;
  }
  return undefined;
}

export default defineType({
  name: 'SubmitFrame',
  description: 'A recurrence: when the jobs submitted with it are submitted again.',
  key: 'partitioned',
  fields: [
    field('EndDate', date(), { description: 'No submits after this instant.' }),
    field('SkipWhenClosed', bool(), {
      default: false,
      description: "Skip an instant when the job's time window is closed then, instead of waiting for it to open.",
    }),
    field('Elements', list(element, 100), { default: [] }),
    field('CronExpression', string(255, CRON, 'five or six cron fields such as 0 6 * * 1-5'), {
      description: 'The alternative to Elements.',
    }),
    field('TimeZone', timezone(), { description: "Zone of StartTime and the cron expression; empty: the job's." }),
  ],
  rules,
});
