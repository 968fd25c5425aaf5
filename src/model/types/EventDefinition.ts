import { folderProblem } from '../../domain/file-watch.ts';
import { bool, field, int, list, record, ref, string } from '../fields.ts';
import { defineType } from '../object-type.ts';

/** At most this many file watches per definition. */
export const MAX_FILE_EVENTS = 50;

/** A folder the agent of a process server polls; each stable file matching the pattern raises the event once. */
const fileEvent = record(
  field('ProcessServer', ref('ProcessServer'), { required: true, description: 'Whose agent watches the folder.' }),
  field('Directory', string(1000), {
    required: true,
    description: 'Absolute path of the folder, without "..", inside one of the agent\'s --watch-root folders.',
  }),
  field('Pattern', string(255), { default: '*', description: 'Glob the file name must match, e.g. *.csv.' }),
  field('PollSeconds', int(1, 86_400), { default: 10, description: 'Seconds between two looks at the folder.' }),
  field('StableSeconds', int(0, 86_400), {
    default: 5,
    description: "Seconds a file's size and modification time must stay unchanged before it counts.",
  }),
  field('MoveDirectory', string(1000), {
    description: 'Absolute folder a counted file is moved into before the raise; empty: the file stays.',
  }),
  field('Enabled', bool(), { default: true }),
);

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
    field('FileEvents', list(fileEvent, MAX_FILE_EVENTS), {
      description:
        'Folders watched by agents: each file matching, once stable, raises the event with its full path as RaiserComment (docs/architecture.md §7b).',
    }),
  ],
  privileges: ['View', 'Create', 'Edit', 'Delete', 'Control'],
  traits: { owns: 'Event', onChange: ['file-watches'] },
  rules: (v) => {
    for (const [i, f] of (v.FileEvents ?? []).entries())
      for (const [name, folder] of [
        ['Directory', f.Directory],
        ['MoveDirectory', f.MoveDirectory],
      ] as const)
        if (typeof folder === 'string' && folder !== '') {
          const problem = folderProblem(folder);
          if (problem) return `Field "FileEvents[${i}].${name}" ${problem}`;
        }
    return undefined;
  },
});
