import { bool, field, int, JOB_STATUS_NAMES, list, oneOf, record, ref, string } from '../fields.ts';
import { defineType } from '../object-type.ts';
import { namePattern } from './ProcessServerAlertSource.ts';

/** Raises an alert when a job of a matching definition reaches, and stays in for the delay, one of `Statuses`. */
const status = record(
  field('Status', oneOf(...JOB_STATUS_NAMES), { required: true }),
  field('DelayAmount', int(0, 1_000_000), { default: 0, description: 'Alert only if still in the status after this.' }),
  field('DelayUnits', oneOf('Seconds', 'Minutes', 'Hours', 'Days'), { default: 'Minutes' }),
  field('Message', string(1000), { description: 'Overrides the default alert text for this status.' }),
  field('Cause', string(80), {
    description:
      'Alert only when the job history records this cause for the change (e.g. maxruntime: killed for running past its MaxRunTime); empty: any cause.',
  }),
);

const APPLIES_TO = ['AppliesToChains', 'AppliesToSteps', 'AppliesToProcesses'] as const;

export default defineType({
  name: 'JobDefinitionAlertSource',
  description: 'Raises an alert when a job of a matching definition reaches one of the listed statuses.',
  key: 'partitioned',
  fields: [
    field('NamePattern', namePattern(), { required: true, description: 'Glob over job definition names.' }),
    field('PartitionPattern', namePattern(), { default: '*', description: 'Glob over their partitions.' }),
    field('Statuses', list(status, 64), { default: [] }),
    field('AppliesToChains', bool(), { default: true, description: 'Jobs of chain definitions.' }),
    field('AppliesToSteps', bool(), { default: false, description: 'The step jobs inside chains.' }),
    field('AppliesToProcesses', bool(), { default: true, description: 'All other jobs, chain calls included.' }),
    field('DefaultAlertEscalation', ref('AlertEscalation')),
    field('EscalationExpression', string(1000), { description: 'Tried first; names an escalation.' }),
    field('Enabled', bool(), { readOnly: true, default: true, description: 'Switched by the enable/disable actions.' }),
  ],
  privileges: ['View', 'Create', 'Edit', 'Delete', 'Control'],
  rules: (v) => {
    const statuses = v.Statuses ?? [];
    if (statuses.length === 0) return 'Field "Statuses" must hold at least one status';
    const seen = new Set<unknown>();
    for (const [i, s] of statuses.entries()) {
      const entry = `${s.Status} ${s.Cause ?? ''}`;
      if (seen.has(entry))
        return `Field "Statuses[${i}].Status": ${s.Status}${s.Cause ? ` with Cause ${s.Cause}` : ''} is listed twice`;
      seen.add(entry);
    }
    if (!APPLIES_TO.some((f) => v[f] === true))
      return `Field "AppliesToProcesses": at least one of ${APPLIES_TO.join(', ')} must be true`;
    return undefined;
  },
  traits: { onChange: ['alert-sources'] },
});
