import { field, int, ref, string, timezone } from '../fields.ts';
import { defineType } from '../object-type.ts';

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * A deadline (the SLA of a definition or chain): each run must end by EndBy, on the days TimeWindow applies. The
 * engine watches the runs (engine/deadlines.ts, docs/architecture.md §8c) and raises DeadlineAtRisk, DeadlineMissed
 * and DeadlineMet alerts through AlertEscalation.
 */
export default defineType({
  name: 'Deadline',
  description: 'When the runs of a job definition or chain must have ended, and whom to alert when one will not.',
  key: 'partitioned',
  fields: [
    field('JobDefinition', ref('JobDefinition'), {
      required: true,
      description: 'The definition or chain whose runs it watches.',
    }),
    field('EndBy', string(5, HH_MM, 'a 24-hour time HH:MM'), {
      required: true,
      description: 'Local time by which a run must have ended: the first EndBy after its requested start.',
    }),
    field('TimeZone', timezone(), { description: 'Zone of EndBy and of the days; empty: UTC.' }),
    field('TimeWindow', ref('TimeWindow'), {
      description: 'The days it applies: those on which this window is open at some instant; empty: every day.',
    }),
    field('LeadMinutes', int(0, 1440), {
      default: 0,
      description: 'A run is at risk when its estimated end (P95) is later than EndBy minus this.',
    }),
    field('AlertEscalation', ref('AlertEscalation'), { description: 'Who receives its alerts.' }),
  ],
  traits: { onChange: ['deadlines'] },
});
