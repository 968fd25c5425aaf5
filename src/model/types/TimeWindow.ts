import { date, field, int, list, oneOf, record, ref, string, timezone } from '../fields.ts';
import { defineType } from '../object-type.ts';

/**
 * Product §2.3: a window is closed unless an element opens it. Elements combine by union; the restrictions inside
 * one element by intersection (an element whose restrictions never hold together never opens). A restriction left
 * empty does not restrict; a From without an Until (or the reverse) leaves that end open; equal From and Until mean
 * exactly that value; a month or weekday range whose From comes after its Until wraps (11-2: November to February).
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
  ],
  rules: (v) => {
    const self = `${v.Partition}.${v.Name}`;
    for (const f of ['EnabledDuring', 'DisabledDuring'])
      if (v[f] === self) return `Field "${f}" cannot name the time window itself`;
    return undefined;
  },
  traits: { onChange: ['dispatch'] },
});
