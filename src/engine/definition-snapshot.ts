/**
 * What a job keeps of its definition when it is created (docs/architecture.md §6a): its spec, and a chain's steps
 * and handlers. Editing the definition or the JobChain later does not change a job already made from it.
 */
import type {
  ChainStepSpec,
  ChainStructure,
  JobSpec,
  MisfirePolicy,
  OverdueAction,
  UserMessageSpec,
} from '../domain/job.ts';
import { invalid } from '../errors.ts';
import type { Store, StoredObject } from '../store/store.ts';

type Rec = Record<string, unknown>;
/** A list field of an object's data, or none when it is not a list. */
export const list = (v: unknown): Rec[] => (Array.isArray(v) ? (v as Rec[]) : []);
const MAX_DEPTH = 8;

/** What a job keeps of its definition (see JobSpec): editing the definition later does not change the job. */
export function specOf(definition: StoredObject, windowOverride?: string | null): JobSpec {
  const d = definition.data;
  return {
    type: d.JobDefinitionType as string,
    script: (d.Script as string | null) ?? null,
    completionStrategy: (d.CompletionStrategy as JobSpec['completionStrategy']) ?? 'Default',
    returnCodeMap: (d.ReturncodeMapToCompleted as string | null) ?? '0',
    restart: (d.RestartBehaviour as Record<string, string> | null) ?? {},
    maxStarts: (d.MaxStarts as number | null) ?? null,
    keepJobs: (d.KeepJobs as number | null) ?? null,
    timeWindow: windowOverride ?? (d.TimeWindow as string | null) ?? null,
    ...(typeof d.TimeZone === 'string' ? { windowZone: d.TimeZone } : {}),
    waitEvents: list(d.WaitEvents).map((w) => ({ event: w.EventDefinition as string, clears: w.ClearsEvent === true })),
    raiseEvents: list(d.RaiseEvents).map((r) => ({
      event: r.EventDefinition as string,
      status: (r.StatusToRaiseOn as string | null) ?? 'Completed',
      comment: (r.RaiseComment as string | null) ?? null,
    })),
    locks: Array.isArray(d.Locks) ? (d.Locks as string[]) : [],
    overdue: (d.ActWhenOverdue as OverdueAction | null) ?? 'Scheduled',
    overdueEvent: (d.OverdueEvent as string | null) ?? null,
    misfire: (d.MisfirePolicy as MisfirePolicy | null) ?? 'RunOnce',
    credential: requestCredential(d) ?? (d.Credential as string | null) ?? null,
    userMessage: (d.UserMessage as UserMessageSpec | null) ?? null,
    maxRunTime: (d.MaxRunTime as number | null) ?? null,
    ...requestSpec(d),
  };
}

/** The request of an HTTP or SQL definition, and the JSON paths of its Out parameters. */
function requestSpec(d: Rec): Pick<JobSpec, 'request' | 'jsonPaths'> {
  const request = (
    d.JobDefinitionType === 'HTTP' ? d.Http : d.JobDefinitionType === 'SQL' ? d.Sql : null
  ) as Rec | null;
  if (!request) return {};
  const jsonPaths: Record<string, string> = {};
  for (const p of list(d.Parameters))
    if (typeof p.JsonPath === 'string' && p.Direction !== 'In') jsonPaths[p.Name as string] = p.JsonPath;
  return { request: structuredClone(request), jsonPaths };
}

/** An HTTP or SQL definition's own credential, which the job runs with (it comes before the definition's). */
function requestCredential(d: Rec): string | null {
  const request = (
    d.JobDefinitionType === 'HTTP' ? d.Http : d.JobDefinitionType === 'SQL' ? d.Sql : null
  ) as Rec | null;
  return (request?.Credential as string | null | undefined) ?? null;
}

/** A chain's own MaxRunTime (its JobChain's), which comes before its definition's; null when it has none. */
export async function chainMaxRunTime(tx: Store, definition: StoredObject): Promise<number | null> {
  const chain = await tx.getObject('JobChain', definition.key);
  return (chain?.data.MaxRunTime as number | null | undefined) ?? null;
}

/** The structure a chain job keeps (its JobChain as it is now); 400 when the chain has no JobChain or nests too deep. */
export async function chainStructure(tx: Store, definition: StoredObject, depth: number): Promise<ChainStructure> {
  const chain = await tx.getObject('JobChain', definition.key);
  if (!chain)
    throw invalid(
      `JobDefinition:${definition.key} is a JobChain definition without steps: create JobChain:${definition.key}`,
    );
  if (depth > MAX_DEPTH) throw invalid(`Chains call each other more than ${MAX_DEPTH} deep (at ${definition.key})`);
  return {
    steps: structuredClone((chain.data.Steps as ChainStepSpec[] | null) ?? []),
    handlers: structuredClone((chain.data.StatusHandlers as ChainStructure['handlers'] | null) ?? []),
  };
}
