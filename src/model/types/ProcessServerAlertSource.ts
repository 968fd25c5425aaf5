import { bool, field, list, oneOf, ref, string, timezone } from '../fields.ts';
import { expressionProblem } from '../../domain/reply-match.ts';
import { defineType } from '../object-type.ts';
import { PROCESS_SERVER_STATUSES } from './ProcessServer.ts';

/** Glob over object names: `*` any run of characters, `?` one character; no regular expressions (docs/architecture.md §10). */
export const namePattern = () => string(80, /^[A-Za-z0-9_*?]+$/, 'letters, digits, _ and the wildcards * and ?');

/**
 * Raises an alert when a matching process server enters one of `Statuses`. Messages may use
 * `${processServer}`, `${oldStatus}` and `${newStatus}`. The escalation expression is tried first, then the default.
 */
export default defineType({
  name: 'ProcessServerAlertSource',
  description: 'Raises an alert when a matching process server changes to one of the listed statuses.',
  key: 'partitioned',
  fields: [
    field('NamePattern', namePattern(), { default: '*', description: 'Glob over process server names.' }),
    field('PartitionPattern', namePattern(), { default: '*', description: 'Glob over their partitions.' }),
    field('Statuses', list(oneOf(...PROCESS_SERVER_STATUSES), 16), { default: [] }),
    field('TimeWindow', ref('TimeWindow'), { description: 'Alert only while this window has TimeWindowStatus.' }),
    field('TimeWindowStatus', oneOf('Open', 'Closed'), { default: 'Open' }),
    field('TimeZone', timezone()),
    field('OperatorMessageExpression', string(1000), { default: 'Acknowledge', description: 'The alert text.' }),
    field('ReplyExpression', string(1000), { default: 'Acknowledge', description: 'Replies the alert accepts.' }),
    field('Address', string(1000), { description: 'Where the alert is sent besides the escalation.' }),
    field('DefaultAlertEscalation', ref('AlertEscalation')),
    field('EscalationExpression', string(1000), {
      description: 'Gives the name of an escalation; may use the variables of the messages.',
    }),
    field('Enabled', bool(), { readOnly: true, default: true, description: 'Switched by the enable/disable actions.' }),
  ],
  privileges: ['View', 'Create', 'Edit', 'Delete', 'Control'],
  rules: (v) => {
    const statuses = v.Statuses ?? [];
    if (new Set(statuses).size !== statuses.length) return 'Field "Statuses" names a status twice';
    const problem = typeof v.ReplyExpression === 'string' ? expressionProblem(v.ReplyExpression) : undefined;
    return problem ? `Field "ReplyExpression": ${problem}` : undefined;
  },
});
