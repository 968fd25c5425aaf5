// Creating a chain's jobs (docs/architecture.md §3): the step jobs and their call jobs, Chained, when a chain job
// is created or a step runs again; and how the newest job of each slot is found among a job's children.

import { itemAt } from '../domain/item-at.ts';
import type { ChainCallSpec, ChainStructure, JobRecord } from '../domain/job.ts';
import { buildJobParameters } from '../domain/parameters.ts';
import { loopYielder } from '../loop-yield.ts';
import { fieldDefault } from '../model/data.ts';
import { declaredParameters } from '../model/definition-parameters.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import type { Effects, Kernel } from './kernel.ts';

export type Structure = ChainStructure & { depth: number };

/** A chain job's steps and handlers (kept apart from its row, read through the store's cache) and its depth. */
export async function structureOf(tx: Store, chain: JobRecord): Promise<Structure> {
  const kept = chain.data.chain?.structure ? await tx.jobs.chainStructure(chain) : undefined;
  return { steps: kept?.steps ?? [], handlers: kept?.handlers ?? [], depth: chain.data.chain?.structure?.depth ?? 0 };
}

/** Creates the step job of step `index` and its call jobs, Chained (calls with SubmitDisabled: Disabled). */
export async function createStepJobs(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  index: number,
  now: number,
  effects: Effects,
  runs = 0,
): Promise<JobRecord> {
  const structure = await structureOf(tx, chain);
  const step = itemAt(structure.steps, index);
  const stepJob = await kernel.insert(
    tx,
    {
      definition: chain.definition,
      partition: chain.partition,
      status: 'Chained',
      priority: chain.priority,
      queue: chain.queue,
      processServer: null,
      requestedStart: now,
      scheduledStart: null,
      runStart: null,
      runEnd: null,
      returnCode: null,
      parentJob: chain.jobId,
      jobGroup: null,
      topStart: chain.topStart,
      attempt: 0,
      starts: 0,
      submittedBy: chain.submittedBy,
      description: step.Description ?? step.Name,
      data: {
        zone: chain.data.zone,
        parameters: [],
        notes: [],
        spec: {
          ...chain.data.spec,
          type: 'JobChainStep',
          restart: {},
          keepJobs: null,
          waitEvents: [],
          raiseEvents: [],
          locks: [],
          timeWindow: null,
          maxRunTime: null,
        },
        chain: { step: { index, runs, name: step.Name } },
      },
      creationTime: now,
      modificationTime: now,
    },
    effects,
  );
  for (const [j, call] of step.Calls.entries())
    await createCallJob(kernel, tx, chain, stepJob, index, j, call, now, effects);
  return stepJob;
}

export async function createCallJob(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  stepJob: JobRecord,
  stepIndex: number,
  callIndex: number,
  call: ChainCallSpec,
  now: number,
  effects: Effects,
  status: JobStatus = call.SubmitDisabled ? 'Disabled' : 'Chained',
): Promise<JobRecord | undefined> {
  const definition = await tx.getObject('JobDefinition', call.JobDefinition);
  if (!definition) return undefined;
  const d = definition.data;
  // Mandatory values may come from mappings when the step starts: here every parameter takes its default.
  const declared = declaredParameters(d).map((p) => ({ ...p, Optional: true }));
  return kernel.submit(
    tx,
    {
      definition,
      queue: call.Queue ?? d.DefaultQueue ?? fieldDefault('JobDefinition', 'DefaultQueue'),
      priority: call.Priority ?? d.Priority ?? fieldDefault('JobDefinition', 'Priority'),
      zone: chain.data.zone,
      parameters: buildJobParameters(declared, undefined, definition.key, chain.data.zone),
      hold: false,
      description: call.Description ?? null,
      submittedBy: chain.submittedBy,
      parentJob: stepJob.jobId,
      topStart: chain.topStart,
      initialStatus: status,
      chain: { call: { step: stepIndex, call: callIndex } },
      timeWindow: call.TimeWindow ?? null,
      chainDepth: (await structureOf(tx, chain)).depth + 1,
    },
    now,
    effects,
  );
}

/** The newest job of each slot (step index or call index) among `children`. */
export function newestBySlot(
  children: readonly JobRecord[],
  slot: (j: JobRecord) => number | undefined,
): Map<number, JobRecord> {
  const m = new Map<number, JobRecord>();
  for (const c of children) {
    const s = slot(c);
    if (s === undefined) continue;
    const seen = m.get(s);
    if (!seen || c.jobId > seen.jobId) m.set(s, c);
  }
  return m;
}
export const stepSlot = (j: JobRecord) => j.data.chain?.step?.index;
export const callSlot = (j: JobRecord) => j.data.chain?.call?.call;

export async function save(tx: Store, jobs: JobRecord[]): Promise<void> {
  if (jobs.length > 0) await tx.jobs.updateMany(jobs);
}

/** Reaction to a created job: a chain job's step and call jobs (a new chain job, or one restarted as a copy). */
export async function createChainJobs(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  now: number,
  effects: Effects,
): Promise<void> {
  const { steps } = await structureOf(tx, chain);
  // A chain of thousands of jobs is created in one transaction; between steps other requests are served (those
  // that need the database wait for the commit).
  const slice = loopYielder();
  for (let i = 0; i < steps.length; i++) {
    await slice();
    await createStepJobs(kernel, tx, chain, i, now, effects);
  }
}
