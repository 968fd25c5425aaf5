import { bool, field, int, ref, timezone } from '../fields.ts';
import { defineType } from '../object-type.ts';

/** Elements in the order the XML interface writes a Queue's. */
export default defineType({
  name: 'Queue',
  description: 'Jobs wait in a queue until a process server serving it through a queue provider runs them.',
  key: 'partitioned',
  fields: [
    field('ExecutionSize', int(0, 100_000), { description: 'How many jobs may run at once; empty means no limit.' }),
    field('Held', bool(), { default: false, description: '`true` closes (holds) the queue.' }),
    field('HoldLevel', int(1, 100), { description: 'Jobs with a priority below it do not start.' }),
    field('Inclusive', bool(), { default: false, description: 'Jobs in status Waiting count against ExecutionSize.' }),
    field('InclusiveConsoleJobs', bool(), { default: false, description: 'Jobs in status Console count too.' }),
    field('Overdue', bool(), { default: false, description: 'Jobs that miss their time window go to Overdue.' }),
    field('QueueTimeZone', timezone(), { description: 'Used when the time window has no zone of its own.' }),
    field('TimeWindow', ref('TimeWindow'), { description: 'The queue releases jobs only while it is open.' }),
  ],
  privileges: ['View', 'Create', 'Edit', 'Delete', 'Submit'],
  traits: { onChange: ['dispatch', 'queue-hold'] },
});
