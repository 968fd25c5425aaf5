import { MAX_RUN_TIME_LIMIT } from '../../domain/max-run-time.ts';
import type { ValueOf } from '../field-values.ts';
import {
  bool,
  field,
  HANDLED_FINAL_STATUSES,
  int,
  list,
  name,
  oneOf,
  record,
  ref,
  string,
  text,
  timezone,
} from '../fields.ts';
import { defineType } from '../object-type.ts';
import { DEFINITION_TYPES, SCRIPT_DEFINITION_TYPES } from './ProcessServer.ts';
import { httpField, requestRules, sqlField } from './job-requests.ts';

export const RESTART_ACTIONS = [
  'Continue',
  'StopSubmitFrame',
  'RequestRestart',
  'Restart',
  'RestartFromError',
  'RestartNoResubmit',
] as const;

/** `0`, `0,3-5,100-`, `-5,40-90`: return codes (and ranges, open at the top) that mean Completed. */
export const RETURN_CODE_MAP = /^-?\d{1,10}(--?\d{1,10}|-)?(,-?\d{1,10}(--?\d{1,10}|-)?)*$/;

/** MaxRunTime of a definition, a chain and a submit (docs/architecture.md §6b). */
export const MAX_RUN_TIME_TEXT =
  'Seconds a job may run (from its start, while Running, Waiting or Console) before it is killed as by the kill action, ending Killed with cause maxruntime; empty: no limit.';

const parameter = record(
  field('Name', name(), { required: true }),
  field('Direction', oneOf('In', 'Out', 'InOut'), { default: 'In' }),
  field('DataType', oneOf('String', 'Number', 'Date'), { default: 'String' }),
  field('DefaultValue', string(4000)),
  field('Optional', bool(), { default: false }),
  field('DisplayOrder', int(0, 100_000)),
  field('Description', string(255)),
  field(
    'JsonPath',
    string(255, /^\$(\.[A-Za-z_][A-Za-z0-9_]*|\[\d{1,6}\])*$/, 'a path such as $.id or $.items[0].name'),
    {
      description: 'HTTP definitions: an Out parameter filled from this path of the JSON response body.',
    },
  ),
);

/** What a UserMessage job asks: its text, the answers offered and who may give them. */
const userMessage = record(
  field('Text', text(4000), {
    required: true,
    description:
      'The question; ${jobid}, ${jobname}, ${queue}, ${requestedstarttime} and ${<parameter>} are substituted.',
  }),
  field(
    'Responses',
    list(
      record(
        field('Response', string(255), { required: true }),
        field('Status', oneOf('Completed', 'Error'), { default: 'Completed' }),
        field('ReturnCode', int(-2_147_483_648, 2_147_483_647), { default: 0 }),
      ),
      50,
    ),
    { default: [] },
  ),
  field('Participants', list(string(255), 200), {
    default: [],
    description: 'User names, or role names written role:<name>; only they may reply.',
  }),
);

const restartBehaviour = record(
  ...HANDLED_FINAL_STATUSES.map((s) => field(s, oneOf(...RESTART_ACTIONS), { default: 'Continue' })),
);

function rules(v: {
  Parameters?: ValueOf<typeof parameter>[] | null;
  UserMessage?: ValueOf<typeof userMessage> | null;
  JobDefinitionType?: string | null;
  ReturncodeMapToCompleted?: string | null;
}): string | undefined {
  const params = v.Parameters ?? [];
  const seen = new Set<string>();
  for (const [i, p] of params.entries()) {
    const at = `Parameters[${i}]`;
    if (seen.has(p.Name)) return `Field "${at}.Name": parameter ${p.Name} is declared twice`;
    seen.add(p.Name);
    const dv = p.DefaultValue ?? null;
    if (dv !== null && p.Direction === 'Out') return `Field "${at}.DefaultValue": an Out parameter has no default`;
    if (p.JsonPath != null && p.Direction === 'In')
      return `Field "${at}.JsonPath": only an Out or InOut parameter is filled from the response`;
    if (dv !== null && p.DataType === 'Number' && (dv.trim() === '' || !Number.isFinite(Number(dv))))
      return `Field "${at}.DefaultValue" must be a number for a Number parameter`;
  }
  const um = v.UserMessage ?? null;
  if (v.JobDefinitionType === 'UserMessage') {
    if (!um) return 'Field "UserMessage" is required for a UserMessage definition';
    if ((um.Responses ?? []).length === 0) return 'Field "UserMessage.Responses" must offer at least one response';
    if ((um.Participants ?? []).length === 0)
      return 'Field "UserMessage.Participants" must name at least one user or role';
    const names = new Set<string>();
    for (const [i, r] of (um.Responses ?? []).entries()) {
      if (names.has(r.Response.toLowerCase()))
        return `Field "UserMessage.Responses[${i}].Response": ${r.Response} is offered twice`;
      names.add(r.Response.toLowerCase());
    }
  } else if (um) return 'Field "UserMessage" is only for a UserMessage definition';
  const request = requestRules(v);
  if (request) return request;
  const rc = v.ReturncodeMapToCompleted ?? null;
  if (rc !== null && !RETURN_CODE_MAP.test(rc))
    return 'Field "ReturncodeMapToCompleted" must be a list of return codes and ranges such as 0,3-5,100-';
  return undefined;
}

export default defineType({
  name: 'JobDefinition',
  description: 'A process definition: what to run, with which parameters, where and when.',
  key: 'partitioned',
  fields: [
    field('JobDefinitionType', oneOf(...DEFINITION_TYPES), { default: 'BASH' }),
    field('Script', text(1_000_000), { description: 'Script text; parameters reach it as environment variables.' }),
    field('Parameters', list(parameter, 500), { default: [] }),
    field('DefaultQueue', ref('Queue'), { default: 'GLOBAL.Default' }),
    field('Priority', int(1, 100), { default: 50 }),
    field('TimeWindow', ref('TimeWindow')),
    field('TimeZone', timezone()),
    field('HoldOnSubmit', bool(), { default: false }),
    field('CompletionStrategy', oneOf('Default', 'External'), { default: 'Default' }),
    field('ReturncodeMapToCompleted', string(255), { default: '0' }),
    field('RestartBehaviour', restartBehaviour),
    field('MaxStarts', int(1, 1000), { description: 'Caps automatic restarts.' }),
    field(
      'WaitEvents',
      list(
        record(
          field('EventDefinition', ref('EventDefinition'), { required: true }),
          field('ClearsEvent', bool(), { default: false }),
          field('AutoSubmit', oneOf('Never', 'Always', 'OnlyOne'), { default: 'Never' }),
        ),
        100,
      ),
      { default: [] },
    ),
    field(
      'RaiseEvents',
      list(
        record(
          field('EventDefinition', ref('EventDefinition'), { required: true }),
          field('StatusToRaiseOn', oneOf(...HANDLED_FINAL_STATUSES), { default: 'Completed' }),
          field('RaiseComment', string(1000)),
        ),
        100,
      ),
      { default: [] },
    ),
    field('Locks', list(ref('Lock'), 100), { default: [] }),
    field('ActWhenOverdue', oneOf('Scheduled', 'Overdue', 'Canceled', 'Held'), {
      default: 'Scheduled',
      description:
        'A job that misses its time window (it waited through a whole opening): Scheduled waits for the next opening, Overdue waits for an operator, Canceled and Held do so.',
    }),
    field('OverdueEvent', ref('EventDefinition'), { description: 'Raised when a job of this definition is overdue.' }),
    field('MisfirePolicy', oneOf('Skip', 'RunOnce', 'RunAll'), {
      default: 'RunOnce',
      description:
        'Occurrences of a recurrence missed while the server was down: Skip them, run the late one once, or run every missed one.',
    }),
    field('Credential', string(255), {
      description:
        'A credential the job runs with, by key (<partition>.<name>) or by VirtualUser: its job receives CREDENTIAL_USER and CREDENTIAL_PASSWORD.',
    }),
    field('UserMessage', userMessage, { description: 'For a UserMessage definition: what it asks and whom.' }),
    httpField,
    sqlField,
    field('KeepJobs', int(0, 1_000_000), { description: 'Keep this many finished jobs; empty keeps them all.' }),
    field('MaxRunTime', int(1, MAX_RUN_TIME_LIMIT), { description: MAX_RUN_TIME_TEXT }),
  ],
  privileges: ['View', 'Create', 'Edit', 'Delete', 'Submit'],
  rules,
  traits: {
    twin: { type: 'JobChain', needsIt: false, when: (d) => d.JobDefinitionType === 'JobChain' },
    script: (d) => SCRIPT_DEFINITION_TYPES.some((t) => t === d.JobDefinitionType),
  },
});
