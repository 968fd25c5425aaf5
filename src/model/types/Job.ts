import {
  type Field,
  type JobStatus,
  bool,
  date,
  decimal,
  field,
  int,
  JOB_STATUS_NAMES,
  JOB_STATUSES,
  list,
  listOrOne,
  map,
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
import type { JobFileRecord, JobRecord } from '../../domain/job.ts';
import { MAX_RUN_TIME_LIMIT } from '../../domain/max-run-time.ts';
import { MAX_BULK_JOBS } from '../../domain/bulk.ts';
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
    description: 'JobDefinitionParameter:<partition>.<definition>.<parameter>.',
  }),
  field('InValueString', text(4000), { description: 'May span lines.' }),
  field('InValueNumber', decimal()),
  field('InValueDate', date()),
  field('OutValueString', text(4000)),
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
const NOTE_COMMENT = string(1000);

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
  field('MaxRunTime', int(1, MAX_RUN_TIME_LIMIT), {
    description:
      "Seconds the job may run before it is killed (cause maxruntime). Default: the definition's MaxRunTime.",
  }),
];

/** What PATCH /Job/<id> may change (docs/architecture.md §6). */
const MODIFIABLE_FIELDS: readonly string[] = [
  'RequestedStartTime',
  'Queue',
  'Priority',
  'Description',
  'JobParameters',
];

/** A bulk action (POST /Job/bulk/<action>, docs/architecture.md §6): which jobs, and how it runs. */
const BULK_FIELDS = [
  field('Filter', map(20, /^[A-Za-z_]+$/, 'letters and _ (a query parameter of GET /Job)', 400, 40), {
    description:
      'The jobs GET /Job lists with these query parameters (Status, JobDefinition, Queue, ProcessServer, Partition, ParentJob, JobGroup, Since, Until, Search), as texts; its match is fixed when the request starts.',
  }),
  field('JobIds', list(int(1), MAX_BULK_JOBS), { description: 'The jobs by jobId; exactly one of Filter and JobIds.' }),
  field('Comment', text(1000), {
    description: "Recorded in each job's history entry (and given to an action whose body takes a Comment).",
  }),
  field('DryRun', bool(), {
    description: 'True: nothing changes; the answer says what would be done and what skipped.',
  }),
  field('Async', bool(), {
    description: 'True: answered 202 at once with a RequestId to follow at GET /Job/bulk/requests/<RequestId>.',
  }),
];

/** The Job's request bodies (docs/architecture.md §12); the action table names which one an action takes. */
const forms = {
  submit: defineForm('JobSubmit', 'Every field is optional (docs/architecture.md §12).', SUBMIT_FIELDS),
  properties: defineForm(
    'JobProcessProperties',
    "Process properties applied with the action, every field optional; restart applies them to the new job. A field that cannot change in the job's status is 400 naming it; HoldOnSubmit, SubmitFrame and MaxRunTime are given at submit only.",
    SUBMIT_FIELDS,
  ),
  completion: defineForm(
    'JobCompletion',
    'updateJob: a final Status, and Description, notes and Out values applied to the job.',
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
  modify: defineForm(
    'JobModify',
    'PATCH /Job/<id>: what to change on a job that has not started, at least one field; each change is kept in its history.',
    SUBMIT_FIELDS.filter((f) => MODIFIABLE_FIELDS.includes(f.name)),
  ),
  comment: defineForm(
    'JobMarkComment',
    "markcompleted and markerror: why the final status is set by hand, kept in the job's history and notes.",
    [field('Comment', NOTE_COMMENT, { required: true, description: 'Why; shown in the history with the user.' })],
  ),
  bulk: defineForm('JobBulk', 'A bulk action: exactly one of Filter and JobIds, at most 10,000 jobs.', BULK_FIELDS),
};

/** Where a field's value comes from in a stored job (its row, its data column, its files), in stored form. */
type Read = (job: JobRecord, files: readonly JobFileRecord[]) => unknown;
const at = (job: JobRecord, ms: number | null) => (ms === null ? null : { ms, zone: job.data.zone });
const waitsFor = (job: JobRecord, statuses: readonly JobStatus[], id: number | undefined) =>
  statuses.includes(job.status) ? (id ?? null) : null;

/**
 * The Job's fields, each with where its value comes from: GET, lists (and their `fields=`), the feed and the
 * console all render a job from this table, so a new field is one line here (and, when it is a column, its
 * migration and the store's row mapping).
 */
const FIELDS: ReadonlyArray<[Field, Read]> = [
  [field('JobDefinition', ref('JobDefinition'), ro), (j) => j.definition],
  [field('Description', DESCRIPTION, ro), (j) => j.description],
  [field('Documentation', text(100_000), ro), () => null],
  [field('Status', oneOf(...JOB_STATUS_NAMES), ro), (j) => j.status],
  [
    field('StatusCode', oneOf(...Object.values(JOB_STATUSES)), {
      ...ro,
      description: 'One letter (docs/architecture.md §6).',
    }),
    (j) => JOB_STATUSES[j.status],
  ],
  [field('Priority', PRIORITY, ro), (j) => j.priority],
  [field('Queue', ref('Queue'), ro), (j) => j.queue],
  [field('ProcessServer', ref('ProcessServer'), ro), (j) => j.processServer],
  [field('RequestedStartTime', date(), ro), (j) => at(j, j.requestedStart)],
  [field('ScheduledStartTime', date(), ro), (j) => at(j, j.scheduledStart)],
  [field('RunStart', date(), ro), (j) => at(j, j.runStart)],
  [field('RunEnd', date(), ro), (j) => at(j, j.runEnd)],
  [field('ReturnCode', int(), ro), (j) => j.returnCode],
  [
    field('ParentJob', int(1), { ...ro, description: 'The jobId of the chain or step job that submitted it.' }),
    (j) => j.parentJob,
  ],
  [field('JobGroup', int(1), { ...ro, description: 'Jobs of one recurrence share it.' }), (j) => j.jobGroup],
  [field('SubmittedBy', string(255), ro), (j) => j.submittedBy],
  [field('JobParameters', PARAMETERS, ro), (j) => j.data.parameters],
  [field('JobNotes', list(NOTE, MAX_NOTES), ro), (j) => j.data.notes],
  [
    field('JobFiles', list(jobFile, 1000), ro),
    (_, files) =>
      files.map((f) => ({ uniqueId: f.uniqueId, Name: f.name, FileOrder: f.fileOrder, Type: f.type, Size: f.size })),
  ],
  [
    field('OperatorMessage', int(1), {
      ...ro,
      description: 'The id of the operator message the job waits for a reply to.',
    }),
    (j) => waitsFor(j, ['ConsoleRestart', 'Console'], j.data.operatorMessage),
  ],
  [
    field('UserMessage', int(1), { ...ro, description: 'The id of the user message the job waits for a reply to.' }),
    (j) => waitsFor(j, ['Console'], j.data.userMessage),
  ],
  [
    field('MaxRunTime', int(1, MAX_RUN_TIME_LIMIT), {
      ...ro,
      description: "Seconds it may run before it is killed: its submit's, its chain's or its definition's MaxRunTime.",
    }),
    (j) => (j.data.chain?.step ? null : (j.data.spec.maxRunTime ?? null)),
  ],
  [field('CreationTime', date(), ro), (j) => at(j, j.creationTime)],
  [field('LastModificationTime', date(), ro), (j) => at(j, j.modificationTime)],
];

/** A stored job's field values in stored form (dates as {ms, zone}), for `renderObject`. */
export const jobValues = (job: JobRecord, files: readonly JobFileRecord[]): Record<string, unknown> =>
  Object.fromEntries(FIELDS.map(([f, read]) => [f.name, read(job, files)]));

export default defineType({
  name: 'Job',
  description: 'A process: one run of a job definition.',
  key: 'numeric',
  storage: 'runtime',
  fields: FIELDS.map(([f]) => f),
  privileges: ['View', 'Control', 'Delete'],
  forms,
});
