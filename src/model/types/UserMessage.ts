import { date, field, int, list, oneOf, record, string, text } from '../fields.ts';
import { defineForm, defineType } from '../object-type.ts';

/**
 * Made by a job of type UserMessage on reaching Running: the job waits in Console while the message is
 * ManualTask; a participant's reply picks one of `Responses`, whose Status and ReturnCode the job then takes.
 */
export const USER_MESSAGE_STATUSES = ['ManualTask', 'Completed', 'Error'] as const;

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
  },
});
