import {
  date,
  decimal,
  field,
  int,
  JOB_STATUS_NAMES,
  JOB_STATUSES,
  list,
  name,
  oneOf,
  record,
  ref,
  string,
  text,
} from '../fields.ts';
import { defineType } from '../object-type.ts';

/**
 * A process: the JSON shape of docs/architecture.md §12 (jobId, uniqueId and businessKey are added by the renderer). Everything is
 * read-only here: submit, resubmit and updateJob bodies are validated by their own code.
 */
const parameter = record(
  field('Name', name()),
  field('Direction', oneOf('In', 'Out', 'InOut')),
  field('DataType', oneOf('String', 'Number', 'Date')),
  field('JobDefinitionParameter', string(400), {
    description: 'JobDefinitionParameter:<partition>.<definition>.<parameter> (spec §2.3).',
  }),
  field('InValueString', string(4000)),
  field('InValueNumber', decimal()),
  field('InValueDate', date()),
  field('OutValueString', string(4000)),
  field('OutValueNumber', decimal()),
  field('OutValueDate', date()),
);

const jobFile = record(
  field('uniqueId', int(1), { description: 'Addresses the file: /JobFile/<uniqueId>/content.' }),
  field('Name', string(255)),
  field('FileOrder', int(0)),
  field('Type', oneOf('Output', 'Log')),
  field('Size', int(0)),
);

const ro = { readOnly: true } as const;

export default defineType({
  name: 'Job',
  description: 'A process: one run of a job definition.',
  key: 'numeric',
  storage: 'runtime',
  fields: [
    field('JobDefinition', ref('JobDefinition'), ro),
    field('Description', string(255), ro),
    field('Documentation', text(100_000), ro),
    field('Status', oneOf(...JOB_STATUS_NAMES), ro),
    field('StatusCode', oneOf(...Object.values(JOB_STATUSES)), {
      ...ro,
      description: 'One letter (docs/architecture.md §6).',
    }),
    field('Priority', int(1, 100), ro),
    field('Queue', ref('Queue'), ro),
    field('ProcessServer', ref('ProcessServer'), ro),
    field('RequestedStartTime', date(), ro),
    field('ScheduledStartTime', date(), ro),
    field('RunStart', date(), ro),
    field('RunEnd', date(), ro),
    field('ReturnCode', int(), ro),
    field('ParentJob', int(1), { ...ro, description: 'The jobId of the chain or step job that submitted it.' }),
    field('JobGroup', int(1), { ...ro, description: 'Jobs of one recurrence share it.' }),
    field('SubmittedBy', string(255), ro),
    field('JobParameters', list(parameter, 500), ro),
    field('JobNotes', list(text(4000), 1000), ro),
    field('JobFiles', list(jobFile, 1000), ro),
    field('OperatorMessage', int(1), {
      ...ro,
      description: 'The id of the operator message the job waits for a reply to.',
    }),
    field('UserMessage', int(1), { ...ro, description: 'The id of the user message the job waits for a reply to.' }),
    field('CreationTime', date(), ro),
    field('LastModificationTime', date(), ro),
  ],
  privileges: ['View', 'Control', 'Delete'],
});
