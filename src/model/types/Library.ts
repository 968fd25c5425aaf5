import { field, int, list, record, string } from '../fields.ts';
import { defineType } from '../object-type.ts';

/** Code shared by job definitions. Its files are uploaded with jar-put, so here they are only listed. */
const file = record(
  field('Name', string(255)),
  field('Size', int(0), { description: 'Bytes.' }),
  field('Sha256', string(64, /^[0-9a-f]{64}$/, '64 lower-case hexadecimal digits')),
);

export default defineType({
  name: 'Library',
  description: 'Code shared by job definitions, uploaded with jar-put.',
  key: 'partitioned',
  fields: [
    field('Files', list(file, 10_000), { derived: true, description: 'The files stored with jar-put or an import.' }),
  ],
  traits: { files: 'library', script: () => true },
});
