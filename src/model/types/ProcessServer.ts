import { field, int, list, oneOf, ref, secret, timezone } from '../fields.ts';
import { defineType } from '../object-type.ts';

/**
 * Definition types an agent can run, and the ones the server runs itself on GLOBAL.System. Of the agent's, the
 * script types are offered by default; HTTP and SQL (run inside the agent process, see docs/architecture.md §7)
 * only where an operator lists them in DefinitionTypes.
 */
export const SCRIPT_DEFINITION_TYPES = ['BASH', 'SH', 'PYTHON', 'NODE'] as const;
export const REQUEST_DEFINITION_TYPES = ['HTTP', 'SQL'] as const;
export const AGENT_DEFINITION_TYPES = [...SCRIPT_DEFINITION_TYPES, ...REQUEST_DEFINITION_TYPES] as const;
export const SERVER_DEFINITION_TYPES = ['System', 'JobChain', 'UserMessage'] as const;
export const DEFINITION_TYPES = [...AGENT_DEFINITION_TYPES, ...SERVER_DEFINITION_TYPES] as const;
export const PROCESS_SERVER_STATUSES = ['Running', 'Starting', 'Connecting', 'ShuttingDown', 'Shutdown', 'Unknown'];

export default defineType({
  name: 'ProcessServer',
  description: 'Runs jobs: GLOBAL.System inside the server, every other one through an agent process.',
  key: 'partitioned',
  fields: [
    field('Status', oneOf(...PROCESS_SERVER_STATUSES), {
      readOnly: true,
      default: 'Connecting',
      description: 'Running, Connecting (no agent yet), Unknown (agent lost), ShuttingDown or Shutdown (stopped).',
    }),
    field('DesiredStatus', oneOf('Running', 'Shutdown'), {
      readOnly: true,
      default: 'Running',
      description: 'Set by the start, stop and restart actions; Shutdown dispatches nothing new.',
    }),
    field('DefinitionTypes', list(oneOf(...DEFINITION_TYPES), 16), {
      default: [...SCRIPT_DEFINITION_TYPES],
      description: 'The definition types this process server offers (HTTP and SQL only when listed here).',
    }),
    field('ExecutionSize', int(0, 100_000), { default: 8, description: 'How many jobs it runs at once.' }),
    field('DefaultTimeZone', timezone(), { default: 'UTC' }),
    field('AgentSecret', secret(256), {
      description: "Write-only: the secret its agent proves (the content of the agent's --secret-file).",
    }),
    field('AgentTimeout', int(1, 86_400), {
      default: 60,
      description: 'Seconds an agent may be silent or away before its jobs become Unknown.',
    }),
    field('QueueProviders', list(ref('QueueProvider')), {
      derived: true,
      description: 'Read from the QueueProvider objects; ignored in POST and PUT bodies.',
    }),
  ],
  privileges: ['View', 'Create', 'Edit', 'Delete', 'Control'],
  traits: { onChange: ['dispatch'] },
});
