import { date, field, int, list, oneOf, record, ref, string, timezone } from '../fields.ts';
import { holidayCodeProblem } from '../../domain/holidays.ts';
import { defineType } from '../object-type.ts';

/**
 * A window is closed unless an element opens it. Elements combine by union; the restrictions inside
 * one element by intersection (an element whose restrictions never hold together never opens). A restriction left
 * empty does not restrict; a From without an Until (or the reverse) leaves that end open; equal From and Until mean
 * exactly that value; a month or weekday range whose From comes after its Until wraps (11-2: November to February).
 * Holidays, Workdays and shifting: docs/architecture.md §5a (src/domain/holidays.ts, workdays.ts, calendar-shift.ts).
 */
export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

const FROM_TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;
const UNTIL_TIME = /^(([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?|24:00(:00)?)$/;

const element = record(
  field('FromDate', date()),
  field('UntilDate', date()),
  field('FromMonth', int(1, 12)),
  field('UntilMonth', int(1, 12)),
  field('FromDayOfMonth', int(1, 31), { description: 'Past the end of a month means its last day.' }),
  field('UntilDayOfMonth', int(1, 31)),
  field('DayOfMonthOffset', int(-31, 31), { description: 'Shifts the days the day-of-month range selects.' }),
  field('FromWeekday', oneOf(...WEEKDAYS)),
  field('UntilWeekday', oneOf(...WEEKDAYS)),
  field('WeekdayOffset', int(-31, 31), { description: 'Shifts the days the weekday range selects.' }),
  field('FromTime', string(8, FROM_TIME, 'a 24-hour time HH:MM or HH:MM:SS')),
  field('UntilTime', string(8, UNTIL_TIME, 'a 24-hour time HH:MM or HH:MM:SS, or 24:00'), {
    description: 'Exclusive end of the open period of each day.',
  }),
  field('TimeOffsetHours', int(-23, 23), {
    description: 'Shifts the element day by this many hours, so a time range can cross midnight.',
  }),
  field('FromWorkday', int(-23, 23), {
    description: 'The n-th working day of the month (1..23), or from its end (-1 the last); not 0. See Workdays.',
  }),
  field('UntilWorkday', int(-23, 23), { description: 'As FromWorkday; equal values mean exactly that working day.' }),
);

export default defineType({
  name: 'TimeWindow',
  description: 'When something may run: closed unless one of its elements opens it.',
  key: 'partitioned',
  fields: [
    field('TimeZone', timezone(), { description: 'Empty: the zone of whatever uses the window.' }),
    field('EnabledDuring', ref('TimeWindow'), { description: 'The window opens only while this one is open too.' }),
    field('DisabledDuring', ref('TimeWindow'), { description: 'The window stays closed while this one is open.' }),
    field('Elements', list(element, 500), { default: [] }),
    field('Holidays', string(16), {
      description:
        'ISO 3166 country code, optionally -REGION (NL, US-NY, DE-BY): also open all day on its public holidays.',
    }),
    field('Workdays', ref('TimeWindow'), {
      description: 'A day is a working day when this window is open at some time of it; empty: Monday to Friday.',
    }),
    field('ShiftWhen', ref('TimeWindow'), {
      description: 'An opening on a day when this window is open moves by ShiftWorkdays working days.',
    }),
    field('ShiftWorkdays', int(-31, 31), { description: 'Working days to move by (negative: earlier); not 0.' }),
  ],
  rules: (v) => {
    const self = `${v.Partition}.${v.Name}`;
    for (const f of ['EnabledDuring', 'DisabledDuring', 'Workdays', 'ShiftWhen'] as const)
      if (v[f] === self) return `Field "${f}" cannot name the time window itself`;
    if (typeof v.Holidays === 'string') {
      const problem = holidayCodeProblem(v.Holidays);
      if (problem) return `Field "Holidays": ${problem}`;
    }
    if (v.ShiftWorkdays === 0) return 'Field "ShiftWorkdays" must not be 0';
    if ((v.ShiftWhen == null) !== (v.ShiftWorkdays == null))
      return `Field "${v.ShiftWhen == null ? 'ShiftWhen' : 'ShiftWorkdays'}" is required when ${v.ShiftWhen == null ? 'ShiftWorkdays' : 'ShiftWhen'} is set: give both or neither`;
    const elements = v.Elements ?? [];
    for (const [i, e] of elements.entries())
      for (const f of ['FromWorkday', 'UntilWorkday'] as const)
        if (e[f] === 0)
          return `Field "Elements[${i}].${f}" must not be 0: 1..23 counts from the start of the month, -1..-23 from its end`;
    return undefined;
  },
  traits: { onChange: ['dispatch'] },
});
