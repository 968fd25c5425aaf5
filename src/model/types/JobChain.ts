import { parseCondition } from '../../domain/chain-logic.ts';
import { SYSTEM_QUEUE } from '../../domain/job.ts';
import { MAX_RUN_TIME_LIMIT } from '../../domain/max-run-time.ts';
import { errorMessage } from '../../errors.ts';
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
  timezone,
} from '../fields.ts';
import { defineType } from '../object-type.ts';
import { MAX_RUN_TIME_TEXT } from './JobDefinition.ts';

/**
 * The steps of a chain. A chain is a JobDefinition with JobDefinitionType `JobChain` plus this object of the same
 * partition and name (docs/architecture.md §3). Steps run one after another; the calls inside a step run in parallel.
 */

export const CHAIN_HANDLER_ACTIONS = [
  'Continue', // act as if the step Completed: go on with the next step
  'GotoStep', // go on with the step named in GotoStep
  'MarkCompleted', // end the chain Completed
  'MarkError', // end the chain Error
  'RestartStep', // run the whole step again (bounded by the step's MaxRestarts)
  'RestartFromError', // run again only the calls that did not complete
  'RequestRestart', // ask an operator (operator message) whether to restart the step
] as const;

/** `Otherwise` fires when no handler for the step's status does. */
export const CHAIN_HANDLER_STATUSES = [...HANDLED_FINAL_STATUSES, 'Otherwise'] as const;

/** A false precondition skips the step or call; none means it always runs. A window or an expression, not both. */
const precondition = record(
  field('TimeWindow', ref('TimeWindow')),
  field('TimeWindowStatus', oneOf('Open', 'Closed'), { default: 'Open', description: 'Run while the window is this.' }),
  field('TimeZone', timezone(), { description: 'Used when the time window has no zone of its own.' }),
  field('Expression', string(1000), { description: 'A boolean expression over the chain parameters.' }),
);

const statusHandler = record(
  field('Status', oneOf(...CHAIN_HANDLER_STATUSES), { required: true }),
  field('Action', oneOf(...CHAIN_HANDLER_ACTIONS), { required: true }),
  field('GotoStep', name(), { description: 'The step to go to; only with Action GotoStep.' }),
);

/**
 * Where one In/InOut parameter of a call gets its value. `Source` says which of the other fields apply:
 * - `Value`: the literal `Value` (null passes no value, so the called definition's default applies);
 * - `ChainParameter`: the value of the chain's own parameter named `ChainParameter`;
 * - `CallOutput`: the Out/InOut parameter `FromParameter` of call number `FromCall` (1-based, the order of `Calls`)
 *   in the earlier step `FromStep`. It may be unset when that call ended Error, Killed or Unknown.
 */
export const MAPPING_SOURCES = ['Value', 'ChainParameter', 'CallOutput'] as const;
const mapping = record(
  field('Parameter', name(), { required: true, description: 'An In or InOut parameter of the called definition.' }),
  field('Source', oneOf(...MAPPING_SOURCES), { default: 'Value' }),
  field('Value', string(4000)),
  field('ChainParameter', name()),
  field('FromStep', name()),
  field('FromCall', int(1, 100)),
  field('FromParameter', name()),
);
const SOURCE_FIELDS: Record<(typeof MAPPING_SOURCES)[number], Array<keyof Mapping>> = {
  Value: ['Value'],
  ChainParameter: ['ChainParameter'],
  CallOutput: ['FromStep', 'FromCall', 'FromParameter'],
};

/** A call submits one job of `JobDefinition`; empty scheduling fields take the called definition's values. */
const call = record(
  field('JobDefinition', ref('JobDefinition'), { required: true }),
  field('Description', string(255)),
  field('Precondition', precondition),
  field('ParameterMappings', list(mapping, 500), { default: [] }),
  field('Priority', int(1, 100)),
  field('Queue', ref('Queue')),
  field('HoldOnSubmit', bool(), { default: false }),
  field('SubmitDisabled', bool(), { default: false, description: 'The call starts Disabled and ends Ignored.' }),
  field('TimeWindow', ref('TimeWindow')),
);

const step = record(
  field('Name', name(), { required: true }),
  field('Description', string(255)),
  field('Precondition', precondition),
  field('Calls', list(call, 100), { default: [] }),
  field('StatusHandlers', list(statusHandler, 10), { default: [] }),
  field('MaxRestarts', int(1, 1000), { description: 'Runs of the step, the first included; empty: no limit.' }),
);

// The stored forms of the records above, from their declarations.
type Precondition = ValueOf<typeof precondition>;
type Handler = ValueOf<typeof statusHandler>;
type Mapping = ValueOf<typeof mapping>;
type Step = ValueOf<typeof step>;
const isSet = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;

function checkPrecondition(pre: Precondition | null | undefined, at: string): string | undefined {
  if (pre && isSet(pre.TimeWindow) && isSet(pre.Expression))
    return `Field "${at}.Expression" cannot be combined with a TimeWindow in one precondition`;
  // Parsed here so a chain never stores an expression its runtime could not evaluate.
  if (pre && typeof pre.Expression === 'string') {
    try {
      parseCondition(pre.Expression);
    } catch (e) {
      return `Field "${at}.Expression": ${errorMessage(e)}`;
    }
  }
  return undefined;
}

function checkHandlers(handlers: readonly Handler[], at: string, stepNames: Set<string>): string | undefined {
  const seen = new Set<unknown>();
  for (const [k, h] of handlers.entries()) {
    const hAt = `${at}[${k}]`;
    if (seen.has(h.Status)) return `Field "${hAt}.Status": a handler for ${h.Status} is declared twice`;
    seen.add(h.Status);
    if (h.Action === 'GotoStep' && !isSet(h.GotoStep)) return `Field "${hAt}.GotoStep" is required for Action GotoStep`;
    if (h.Action !== 'GotoStep' && isSet(h.GotoStep)) return `Field "${hAt}.GotoStep" applies only to Action GotoStep`;
    if (isSet(h.GotoStep) && !stepNames.has(h.GotoStep))
      return `Field "${hAt}.GotoStep" must name a step of this chain; ${h.GotoStep} is not one`;
  }
  return undefined;
}

function checkMappings(
  mappings: readonly Mapping[],
  at: string,
  steps: readonly Step[],
  stepIndex: number,
): string | undefined {
  const seen = new Set<unknown>();
  for (const [k, m] of mappings.entries()) {
    const mAt = `${at}[${k}]`;
    if (seen.has(m.Parameter)) return `Field "${mAt}.Parameter": parameter ${m.Parameter} is mapped twice`;
    seen.add(m.Parameter);
    const source = m.Source;
    for (const [other, names] of Object.entries(SOURCE_FIELDS))
      for (const n of names) {
        if (other !== source && isSet(m[n])) return `Field "${mAt}.${n}" applies only when Source is ${other}`;
        if (other === source && source !== 'Value' && !isSet(m[n]))
          return `Field "${mAt}.${n}" is required when Source is ${source}`;
      }
    if (source !== 'CallOutput') continue;
    const from = steps.findIndex((s) => s.Name === m.FromStep);
    if (from < 0 || from >= stepIndex)
      return `Field "${mAt}.FromStep" must name an earlier step of this chain; ${m.FromStep} is not one`;
    const calls = (steps[from]?.Calls ?? []).length;
    if ((m.FromCall ?? 0) > calls)
      return `Field "${mAt}.FromCall": step ${m.FromStep} has ${calls} call(s), not ${m.FromCall}`;
  }
  return undefined;
}

function rules(v: { Steps?: Step[] | null; StatusHandlers?: Handler[] | null }): string | undefined {
  const steps = v.Steps ?? [];
  const names = new Set<string>();
  for (const [i, s] of steps.entries()) {
    if (names.has(s.Name)) return `Field "Steps[${i}].Name": step ${s.Name} is declared twice`;
    names.add(s.Name);
  }
  for (const [i, s] of steps.entries()) {
    const at = `Steps[${i}]`;
    const calls = s.Calls ?? [];
    if (calls.length === 0) return `Field "${at}.Calls" must hold at least one call (step ${s.Name})`;
    const problem =
      checkPrecondition(s.Precondition, `${at}.Precondition`) ??
      checkHandlers(s.StatusHandlers ?? [], `${at}.StatusHandlers`, names);
    if (problem) return problem;
    for (const [j, c] of calls.entries()) {
      const cAt = `${at}.Calls[${j}]`;
      const callProblem =
        checkPrecondition(c.Precondition, `${cAt}.Precondition`) ??
        checkMappings(c.ParameterMappings ?? [], `${cAt}.ParameterMappings`, steps, i);
      if (callProblem) return callProblem;
    }
  }
  return checkHandlers(v.StatusHandlers ?? [], 'StatusHandlers', names);
}

export default defineType({
  name: 'JobChain',
  description: 'The steps of a chain definition: steps run in order, the calls of a step in parallel.',
  key: 'partitioned',
  fields: [
    field('Steps', list(step, 200), { default: [] }),
    field('StatusHandlers', list(statusHandler, 10), {
      default: [],
      description: "Chain-wide handlers, consulted after the step's own and before the default behaviour.",
    }),
    field('MaxRunTime', int(1, MAX_RUN_TIME_LIMIT), {
      description: `${MAX_RUN_TIME_TEXT} Kills what runs in the chain; set here, it comes before the chain definition's.`,
    }),
  ],
  rules,
  // Chains run inside the server, on the System process server, which serves GLOBAL.System: their default queue.
  traits: {
    twin: {
      type: 'JobDefinition',
      needsIt: true,
      madeWith: { JobDefinitionType: 'JobChain', DefaultQueue: SYSTEM_QUEUE },
    },
  },
});
