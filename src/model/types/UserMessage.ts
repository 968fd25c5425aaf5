import { date, field, int, list, oneOf, record, string, text } from '../fields.ts';
import { defineForm, defineType } from '../object-type.ts';

/**
 * Made by a job of type UserMessage on reaching Running: the job waits in Console while the message is
 * ManualTask; a participant's reply picks one of `Responses`, whose Status and ReturnCode the job then takes.
 */
export const USER_MESSAGE_STATUSES = ['ManualTask', 'Completed', 'Error'] as const;

/** A forward or delegation, kept in the message's History: who passed it on, to whom, and why. */
export const HAND_OVER_ACTIONS = ['Forward', 'Delegate'] as const;
const handOver = record(
  field('Time', date()),
  field('User', string(255)),
  field('Action', oneOf(...HAND_OVER_ACTIONS)),
  field('To', list(string(255), 50)),
  field('Comment', string(1000)),
);
const delegation = record(field('Delegate', string(255)), field('For', string(255)));

/** The body of a forward and of a delegation: the same shape, checked by the registry. */
const handOverFields = (to: string) => [
  field('To', list(string(255), 50), {
    required: true,
    description: `${to}: user names, or role:<name>; each must exist.`,
  }),
  field('Comment', text(1000), { description: 'Why; kept in the History.' }),
];

const response = record(
  field('Response', string(255)),
  field('Status', oneOf('Completed', 'Error')),
  field('ReturnCode', int()),
);

export default defineType({
  name: 'UserMessage',
  description: 'A question to named users; their response completes the job that asked it.',
  key: 'numeric',
  storage: 'runtime',
  fields: [
    field('Text', text(4000), { readOnly: true }),
    field('Responses', list(response, 50), { readOnly: true }),
    field('Participants', list(string(255), 200), { readOnly: true, description: 'Users who may reply.' }),
    field('Status', oneOf(...USER_MESSAGE_STATUSES), { readOnly: true }),
    field('Job', int(1), { readOnly: true, description: 'The jobId of the job that asked.' }),
    field('Response', string(255), { readOnly: true }),
    field('ReplyComment', string(1000), { readOnly: true }),
    field('ReplyUser', string(255), { readOnly: true }),
    field('ReplyTime', date(), { readOnly: true }),
    field('CreationTime', date(), { readOnly: true }),
    field('Delegates', list(delegation, 200), {
      readOnly: true,
      description: 'Users or roles who may reply in place of a participant (For).',
    }),
    field('ReplyFor', string(255), {
      readOnly: true,
      description: 'The participant in whose place a delegate (ReplyUser) replied; null when a participant did.',
    }),
    field('History', list(handOver, 1000), { readOnly: true, description: 'Forwards and delegations, oldest first.' }),
  ],
  privileges: ['View', 'Reply', 'Delete'],
  forms: {
    reply: defineForm('UserMessageReply', 'One of the responses the message offers; only its participants may reply.', [
      field('Response', text(255), {
        required: true,
        description: 'Matched without regard to case or surrounding blanks.',
      }),
      field('ReplyComment', text(1000)),
    ]),
    forward: defineForm(
      'UserMessageForward',
      'Adds participants to a message waiting for a reply; only a participant may forward it.',
      handOverFields('Who becomes a participant'),
    ),
    delegate: defineForm(
      'UserMessageDelegate',
      "Lets others reply in the caller's place (the reply names both); only a participant may delegate.",
      handOverFields("Who may reply in the caller's place"),
    ),
  },
});
