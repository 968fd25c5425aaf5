import { bool, field, int, ref, timezone } from '../fields.ts';
import { defineType } from '../object-type.ts';

/** Links one queue to one process server; where it and the queue both limit, the most restrictive wins. */
export default defineType({
  name: 'QueueProvider',
  description: 'Links a queue to a process server that runs its jobs.',
  key: 'queueProvider',
  fields: [
    field('Held', bool(), { default: false, description: '`true` closes the queue provider.' }),
    field('ExecutionSize', int(0, 100_000), { description: 'How many jobs of the queue may run on this server.' }),
    field('HoldLevel', int(1, 100)),
    field('Inclusive', bool(), { default: false, description: 'Jobs in status Waiting count against ExecutionSize.' }),
    field('TimeWindow', ref('TimeWindow')),
    field('TimeZone', timezone()),
  ],
  traits: { onChange: ['dispatch'] },
});
