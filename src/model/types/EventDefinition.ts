import { bool, field, string } from '../fields.ts';
import { defineType } from '../object-type.ts';

/** Raising makes an Event of this definition; at most one event per definition is Raised at a time. */
export default defineType({
  name: 'EventDefinition',
  description: 'An event that processes wait for and raise; raising and clearing need Control.',
  key: 'partitioned',
  fields: [
    field('RequiresCommentOnRaise', bool(), { default: false, description: 'A manual raise must give a comment.' }),
    field('RequiresCommentOnClear', bool(), { default: false, description: 'A manual clear must give a comment.' }),
    field('DefaultRaiseComment', string(1000), { description: 'Used when a raise gives no comment.' }),
    field('DefaultClearComment', string(1000), { description: 'Used when a clear gives no comment.' }),
  ],
  privileges: ['View', 'Create', 'Edit', 'Delete', 'Control'],
  traits: { owns: 'Event' },
});
