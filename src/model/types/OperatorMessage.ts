import { date, field, oneOf, string, text } from '../fields.ts';
import { defineForm, defineType } from '../object-type.ts';

/**
 * A message to operators. When a reply is Required it must match ReplyExpression after trimming and
 * collapsing blanks; empty replies are refused.
 */
export const REPLY_STATUSES = ['NotRequired', 'Required', 'Replied'] as const;

export default defineType({
  name: 'OperatorMessage',
  description: 'A message to operators, possibly waiting for a reply.',
  key: 'numeric',
  storage: 'runtime',
  fields: [
    field('FullText', text(4000), { readOnly: true }),
    field('ReplyExpression', string(1000), {
      readOnly: true,
      description: 'The replies accepted: a regular expression such as ^Yes|No$.',
    }),
    field('ReplyStatus', oneOf(...REPLY_STATUSES), { readOnly: true }),
    field('Reply', string(1000), { readOnly: true }),
    field('SenderObject', string(255), { readOnly: true, description: 'What sent it, e.g. Job:42.' }),
    field('CreationTime', date(), { readOnly: true }),
    field('ReplyTime', date(), { readOnly: true }),
    field('ReplyUser', string(255), { readOnly: true }),
  ],
  privileges: ['View', 'Reply', 'Delete'],
  forms: {
    reply: defineForm('OperatorMessageReply', "The reply must match the message's ReplyExpression.", [
      field('Reply', text(1000), {
        required: true,
        description: 'Trimmed, its blanks collapsed to one space, then matched; empty is refused.',
      }),
    ]),
  },
});
