/**
 * What a job keeps of its definition when it is created (docs/architecture.md §6a): its spec, and a chain's steps
 * and handlers. Editing the definition or the JobChain later does not change a job already made from it.
 */
import type { ChainStepSpec, ChainStructure, JobSpec } from '../domain/job.ts';
import { invalid } from '../errors.ts';
import { fieldDefault } from '../model/data.ts';
import type { Store, StoredObject } from '../store/store.ts';

const MAX_DEPTH = 8;

/** What a job keeps of its definition (see JobSpec): editing the definition later does not change the job. */
export function specOf(definition: StoredObject<'JobDefinition'>, windowOverride?: string | null): JobSpec {
  const d = definition.data;
  const restart: Record<string, string> = {};
  for (const [status, action] of Object.entries(d.RestartBehaviour ?? {})) if (action) restart[status] = action;
  return {
    type: d.JobDefinitionType ?? fieldDefault('JobDefinition', 'JobDefinitionType'),
    script: d.Script ?? null,
    completionStrategy: d.CompletionStrategy ?? fieldDefault('JobDefinition', 'CompletionStrategy'),
    returnCodeMap: d.ReturncodeMapToCompleted ?? fieldDefault('JobDefinition', 'ReturncodeMapToCompleted'),
    restart,
    maxStarts: d.MaxStarts ?? null,
    keepJobs: d.KeepJobs ?? null,
    timeWindow: windowOverride ?? d.TimeWindow ?? null,
    ...(typeof d.TimeZone === 'string' ? { windowZone: d.TimeZone } : {}),
    waitEvents: (d.WaitEvents ?? []).map((w) => ({ event: w.EventDefinition, clears: w.ClearsEvent === true })),
    raiseEvents: (d.RaiseEvents ?? []).map((r) => ({
      event: r.EventDefinition,
      status: r.StatusToRaiseOn ?? fieldDefault('JobDefinition', 'RaiseEvents', 'StatusToRaiseOn'),
      comment: r.RaiseComment ?? null,
    })),
    locks: d.Locks ?? [],
    overdue: d.ActWhenOverdue ?? fieldDefault('JobDefinition', 'ActWhenOverdue'),
    overdueEvent: d.OverdueEvent ?? null,
    misfire: d.MisfirePolicy ?? fieldDefault('JobDefinition', 'MisfirePolicy'),
    credential: requestCredential(d) ?? d.Credential ?? null,
    userMessage: d.UserMessage ?? null,
    maxRunTime: d.MaxRunTime ?? null,
    ...requestSpec(d),
  };
}

type DefinitionData = StoredObject<'JobDefinition'>['data'];

/** The request of an HTTP definition or the script of a SQL one; null for other types. */
function requestOf(d: DefinitionData): DefinitionData['Http'] | DefinitionData['Sql'] | null {
  return d.JobDefinitionType === 'HTTP' ? d.Http : d.JobDefinitionType === 'SQL' ? d.Sql : null;
}

/** The request of an HTTP or SQL definition, and the JSON paths of its Out parameters. */
function requestSpec(d: DefinitionData): Pick<JobSpec, 'request' | 'jsonPaths'> {
  const request = requestOf(d);
  if (!request) return {};
  const jsonPaths: Record<string, string> = {};
  for (const p of d.Parameters ?? [])
    if (typeof p.JsonPath === 'string' && p.Direction !== 'In') jsonPaths[p.Name] = p.JsonPath;
  return { request: structuredClone(request), jsonPaths };
}

/** An HTTP or SQL definition's own credential, which the job runs with (it comes before the definition's). */
function requestCredential(d: DefinitionData): string | null {
  return requestOf(d)?.Credential ?? null;
}

/** A chain's own MaxRunTime (its JobChain's), which comes before its definition's; null when it has none. */
export async function chainMaxRunTime(tx: Store, definition: StoredObject): Promise<number | null> {
  const chain = await tx.getObject('JobChain', definition.key);
  return chain?.data.MaxRunTime ?? null;
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
    handlers: structuredClone(chain.data.StatusHandlers ?? []),
  };
}
