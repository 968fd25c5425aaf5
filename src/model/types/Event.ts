import { date, field, int, oneOf, ref, string } from '../fields.ts';
import { MAX_COMMENT } from '../../domain/event-comment.ts';
import { defineForm, defineType } from '../object-type.ts';

/**
 * A raise of an event definition (docs/architecture.md §12). Its id `<definition name><RaiseSequence>` is written by the renderer.
 * Pending: waiting because another event of the definition is Raised; Cleared: cleared or consumed, kept as history.
 */
export const EVENT_STATUSES = ['Pending', 'PendingRaised', 'Raised', 'Cleared'] as const;

export default defineType({
  name: 'Event',
  description: 'One raise of an event definition.',
  key: 'eventId',
  storage: 'runtime',
  fields: [
    field('EventDefinition', ref('EventDefinition'), { readOnly: true }),
    field('RaiseSequence', int(1), { readOnly: true, description: 'Counts the raises of its definition.' }),
    field('Status', oneOf(...EVENT_STATUSES), { readOnly: true }),
    field('RaiserComment', string(1000), { readOnly: true }),
    field('RaiseTime', date(), { readOnly: true }),
    field('RaiserObject', string(255), { readOnly: true, description: 'The job (Job:<id>) or user that raised it.' }),
    field('ClearTime', date(), { readOnly: true }),
    field('ClearerComment', string(1000), { readOnly: true }),
    field('ClearerObject', string(255), { readOnly: true, description: 'The job or user that cleared it.' }),
  ],
  privileges: ['View', 'Control', 'Delete'],
  forms: {
    raise: defineForm('EventRaise', 'Optional.', [
      field('RaiserComment', string(MAX_COMMENT), {
        description:
          "Why it is raised; the definition's DefaultRaiseComment when left out, required when RequiresCommentOnRaise",
      }),
    ]),
    clear: defineForm('EventClear', 'Optional.', [
      field('ClearerComment', string(MAX_COMMENT), {
        description:
          "Why it is cleared; the definition's DefaultClearComment when left out, required when RequiresCommentOnClear",
      }),
    ]),
  },
});
