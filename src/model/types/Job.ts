import {
  bool,
  date,
  decimal,
  field,
  int,
  JOB_STATUS_NAMES,
  JOB_STATUSES,
  list,
  listOrOne,
  name,
  namedRecord,
  oneOf,
  record,
  ref,
  scalar,
  string,
  text,
  HANDLED_FINAL_STATUSES,
} from '../fields.ts';
import { defineForm, defineType } from '../object-type.ts';

/**
 * A process: the JSON shape of docs/architecture.md §12 (jobId, uniqueId and businessKey are added by the renderer).
 * Every field of the object is read-only; what a request may set is declared below as the Job's forms (submit,
 * process properties, completion), from the same field kinds, so the bodies, their validation and their OpenAPI
 * schemas cannot drift from the object.
 */

/** A parameter item: as GET shows it, and as a submit body gives it (naming its parameter by Name or JobDefinitionParameter). */
const parameter = namedRecord(
  'Name',
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

// Field kinds the object and its forms share.
const PARAMETERS = list(parameter, 500);
const DESCRIPTION = string(255);
const PRIORITY = int(1, 100);
const NOTE = text(4000);
const MAX_NOTES = 1000;

/** Submit (POST /Job/<definition>), and the bodies that are a submit: resubmit (PUT /Job/<id>) and restart's. */
const SUBMIT_FIELDS = [
  field('JobParameters', PARAMETERS, {
    description:
      "In values, each item naming its parameter by Name or JobDefinitionParameter and giving one InValue (converted to the parameter's DataType). Direction, DataType and Out values are the definition's: accepted when unchanged.",
  }),
  field('RequestedStartTime', date(), { description: "Not before; its zone becomes the job's zone." }),
  field('Queue', ref('Queue'), { description: "Default: the definition's DefaultQueue." }),
  field('Priority', PRIORITY, { description: "Default: the definition's Priority, else 50." }),
  field('Description', DESCRIPTION),
  field('HoldOnSubmit', bool(), { description: "Default: the definition's HoldOnSubmit." }),
  field('SubmitFrame', ref('SubmitFrame'), {
    description: 'A recurrence: the job is submitted again at each occurrence of this SubmitFrame.',
  }),
];

/** The Job's request bodies (docs/architecture.md §12); the action table names which one an action takes. */
const forms = {
  submit: defineForm('JobSubmit', 'Every field is optional (docs/architecture.md §12).', SUBMIT_FIELDS),
  properties: defineForm(
    'JobProcessProperties',
    "Process properties applied with the action (spec §4 row 13), every field optional; restart applies them to the new job. A field that cannot change in the job's status is 400 naming it; HoldOnSubmit and SubmitFrame are given at submit only.",
    SUBMIT_FIELDS,
  ),
  completion: defineForm(
    'JobCompletion',
    'updateJob (spec §2.3): a final Status, and Description, notes and Out values applied to the job.',
    [
      field('Status', oneOf(...HANDLED_FINAL_STATUSES), { description: 'The final status the job ends in.' }),
      field('Description', DESCRIPTION),
      field('JobNotes', listOrOne(NOTE, MAX_NOTES), { description: 'Appended to the job: one note or a list.' }),
      field(
        'JobParameters',
        list(
          namedRecord(
            'Name',
            field('Name', name(), { required: true, description: 'An Out or InOut parameter of the job.' }),
            field('OutValue', scalar(4000), { description: "Converted to the parameter's DataType; null clears it." }),
          ),
          500,
        ),
      ),
    ],
  ),
};

export default defineType({
  name: 'Job',
  description: 'A process: one run of a job definition.',
  key: 'numeric',
  storage: 'runtime',
  fields: [
    field('JobDefinition', ref('JobDefinition'), ro),
    field('Description', DESCRIPTION, ro),
    field('Documentation', text(100_000), ro),
    field('Status', oneOf(...JOB_STATUS_NAMES), ro),
    field('StatusCode', oneOf(...Object.values(JOB_STATUSES)), {
      ...ro,
      description: 'One letter (docs/architecture.md §6).',
    }),
    field('Priority', PRIORITY, ro),
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
    field('JobParameters', PARAMETERS, ro),
    field('JobNotes', list(NOTE, MAX_NOTES), ro),
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
  forms,
});
