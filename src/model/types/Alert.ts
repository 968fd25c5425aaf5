import { date, field, int, oneOf, ref, string, text } from '../fields.ts';
import { defineForm, defineType } from '../object-type.ts';

/** An alert raised by an alert source; acknowledged by a reply (`Acknowledge`) or escalated when not in time. */
export const ALERT_STATUSES = ['NotAcknowledged', 'Acknowledged', 'Escalated', 'Replied'] as const;

export default defineType({
  name: 'Alert',
  description: 'An alert sent by an alert source, waiting for acknowledgement.',
  key: 'numeric',
  storage: 'runtime',
  fields: [
    field('AlertSource', string(255), {
      readOnly: true,
      description: 'Business key of the source, e.g. ProcessServerAlertSource:GLOBAL.Agents_Down.',
    }),
    field('AlertEscalation', ref('AlertEscalation'), { readOnly: true, description: 'The escalation it is at now.' }),
    field('Status', oneOf(...ALERT_STATUSES), { readOnly: true }),
    field('Message', text(4000), { readOnly: true }),
    field('SourceObject', string(255), { readOnly: true, description: 'What it is about, e.g. Job:42.' }),
    field('ReplyExpression', string(1000), {
      readOnly: true,
      description: 'The replies it accepts; Acknowledge by default.',
    }),
    field('OperatorMessage', int(1), { readOnly: true, description: 'The id of the operator message it sent.' }),
    field('EscalationTime', date(), { readOnly: true, description: 'When it escalates unless acknowledged before.' }),
    field('CreationTime', date(), { readOnly: true }),
    field('Reply', string(1000), { readOnly: true }),
    field('ReplyTime', date(), { readOnly: true }),
    field('ReplyUser', string(255), { readOnly: true }),
  ],
  privileges: ['View', 'Reply', 'Delete'],
  forms: {
    reply: defineForm('AlertReply', "Acknowledge (or what the alert's ReplyExpression accepts) stops its escalation.", [
      field('Response', text(1000), {
        required: true,
        description: 'Trimmed and its blanks collapsed; empty is refused.',
      }),
    ]),
  },
});
