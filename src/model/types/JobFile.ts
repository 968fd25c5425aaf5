import { field, int, oneOf, string } from '../fields.ts';
import { defineType } from '../object-type.ts';

/** An output or log file of a job, addressed by its uniqueId; content is streamed, never loaded. */
export default defineType({
  name: 'JobFile',
  description: 'An output or log file of a job.',
  key: 'numeric',
  storage: 'runtime',
  fields: [
    field('Job', int(1), { readOnly: true, description: 'The jobId of its job.' }),
    field('Name', string(255), { readOnly: true, description: 'stdout.log, stderr.log, or the name the job gave.' }),
    field('FileOrder', int(0), { readOnly: true, description: 'stdout.log is 1.' }),
    field('Type', oneOf('Output', 'Log'), { readOnly: true }),
    field('Format', string(80), { readOnly: true, description: 'A media type such as text/plain.' }),
    field('Size', int(0), { readOnly: true, description: 'Bytes.' }),
  ],
  privileges: ['View', 'Delete'],
});
