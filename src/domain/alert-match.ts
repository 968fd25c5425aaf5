import type { JobRecord } from './job.ts';

/**
 * Which alert sources a change concerns, as pure functions over the sources' stored data. Name
 * and partition patterns are globs (`*` any run, `?` one character), matched without regard to case.
 */

/** Compiled globs: every status change of every job is matched against the sources' patterns. */
const compiled = new Map<string, RegExp>();

export function globMatch(pattern: string, text: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size > 10_000) compiled.clear();
    const body = pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    re = new RegExp(`^${body}$`, 'is');
    compiled.set(pattern, re);
  }
  return re.test(text);
}

const UNIT_MS = { Seconds: 1000, Minutes: 60_000, Hours: 3_600_000, Days: 86_400_000 } as const;

export interface JobAlertStatus {
  Status: string;
  /** Only a change with this job-history cause (e.g. `maxruntime`); none: whatever the cause. */
  Cause?: string | null;
  DelayAmount: number | null;
  DelayUnits: keyof typeof UNIT_MS | null;
  Message: string | null;
}

/** The defaults the registry declares for the sources' fields (the domain does not read the registry: the engine
 * passes them in, read from the declarations). */
export interface AlertSourceDefaults {
  NamePattern: string;
  PartitionPattern: string;
  DelayAmount: number;
  DelayUnits: keyof typeof UNIT_MS;
}

/** What kind of job a JobDefinitionAlertSource's Applies… flags see it as. */
export function jobKind(job: JobRecord): 'AppliesToChains' | 'AppliesToSteps' | 'AppliesToProcesses' {
  if (job.data.chain?.step) return 'AppliesToSteps';
  if (job.data.spec.type === 'JobChain') return 'AppliesToChains';
  return 'AppliesToProcesses';
}

/**
 * The entry of `source` (a JobDefinitionAlertSource's data) for `job` reaching `status` with the history cause
 * `cause`, or undefined: an entry naming that cause before one naming none.
 */
export function jobSourceEntry(
  source: Record<string, unknown>,
  job: JobRecord,
  status: string,
  defaults: AlertSourceDefaults,
  cause?: string | null,
): JobAlertStatus | undefined {
  if (source.Enabled === false || source[jobKind(job)] !== true) return undefined;
  const dot = job.definition.indexOf('.');
  const partition = job.definition.slice(0, dot);
  const name = job.definition.slice(dot + 1);
  if (!globMatch(String(source.NamePattern ?? defaults.NamePattern), name)) return undefined;
  if (!globMatch(String(source.PartitionPattern ?? defaults.PartitionPattern), partition)) return undefined;
  const entries = ((source.Statuses as JobAlertStatus[] | null) ?? []).filter((s) => s.Status === status);
  return entries.find((s) => isSet(s.Cause) && s.Cause === cause) ?? entries.find((s) => !isSet(s.Cause));
}

const isSet = (v: unknown): boolean => v !== null && v !== undefined;

export function delayMs(entry: JobAlertStatus, defaults: AlertSourceDefaults): number {
  return (entry.DelayAmount ?? defaults.DelayAmount) * UNIT_MS[entry.DelayUnits ?? defaults.DelayUnits];
}

/** Whether a ProcessServerAlertSource (its data) watches process server `key` entering `status`. */
export function serverSourceMatches(
  source: Record<string, unknown>,
  key: string,
  status: string,
  defaults: AlertSourceDefaults,
): boolean {
  if (source.Enabled === false) return false;
  const dot = key.indexOf('.');
  if (!globMatch(String(source.NamePattern ?? defaults.NamePattern), key.slice(dot + 1))) return false;
  if (!globMatch(String(source.PartitionPattern ?? defaults.PartitionPattern), key.slice(0, dot))) return false;
  return ((source.Statuses as string[] | null) ?? []).includes(status);
}
