import {
  type CallOutcome,
  decideStep,
  evalCondition,
  parseCondition,
  type StepDecision,
  stepStatus,
} from '../domain/chain-logic.ts';
import {
  type ChainCallSpec,
  type ChainStructure,
  type ChainStepSpec,
  type JobRecord,
  type PreconditionSpec,
  SYSTEM_SERVER,
} from '../domain/job.ts';
import { INITIAL, isFinal, PENDING } from '../domain/job-status.ts';
import { buildJobParameters, currentValue, type DefinitionParameter, setMappedValue } from '../domain/parameters.ts';
import { isOpen } from '../domain/time-window.ts';
import { emptyRecord } from '../domain/own.ts';
import { loopYielder } from '../loop-yield.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import type { Answer, Effects, Kernel } from './kernel.ts';
import { createOperatorMessage } from './operator-message.ts';
import { loadWindow } from './windows.ts';

/**
 * Chains at run time (docs/architecture.md §3). Submitting a chain creates the chain job, its step jobs and their
 * call jobs, all Chained. The chain job runs on GLOBAL.System and waits (Waiting) while its steps run one after
 * another; a step waits while its calls run in parallel through their own queues. When the last call of a step is
 * final, the step's status handlers decide what comes next. Jobs never go back to an earlier status: a step that
 * runs again (RestartStep, GotoStep back) gets new step and call jobs; the newest job of each slot counts.
 * Every function runs inside the caller's transaction; the engine registers the exported reactions on the kernel.
 */

/** A step runs at most this often when it sets no MaxRestarts: a GotoStep loop ends in Error, not forever. */
const DEFAULT_MAX_RUNS = 100;

type Structure = ChainStructure & { depth: number };

/** A chain job's steps and handlers (kept apart from its row, read through the store's cache) and its depth. */
async function structureOf(tx: Store, chain: JobRecord): Promise<Structure> {
  const kept = chain.data.chain?.structure ? await tx.jobs.chainStructure(chain) : undefined;
  return { steps: kept?.steps ?? [], handlers: kept?.handlers ?? [], depth: chain.data.chain?.structure?.depth ?? 0 };
}

/** Creates the step job of step `index` and its call jobs, Chained (calls with SubmitDisabled: Disabled). */
export async function createStepJobs(
  k: Kernel,
  tx: Store,
  chain: JobRecord,
  index: number,
  now: number,
  fx: Effects,
  runs = 0,
): Promise<JobRecord> {
  const structure = await structureOf(tx, chain);
  const step = structure.steps[index] as ChainStepSpec;
  const stepJob = await k.insert(
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
        },
        chain: { step: { index, runs, name: step.Name } },
      },
      creationTime: now,
      modificationTime: now,
    },
    fx,
  );
  for (const [j, call] of step.Calls.entries()) await createCallJob(k, tx, chain, stepJob, index, j, call, now, fx);
  return stepJob;
}

async function createCallJob(
  k: Kernel,
  tx: Store,
  chain: JobRecord,
  stepJob: JobRecord,
  stepIndex: number,
  callIndex: number,
  call: ChainCallSpec,
  now: number,
  fx: Effects,
  status: JobStatus = call.SubmitDisabled ? 'Disabled' : 'Chained',
): Promise<JobRecord | undefined> {
  const definition = await tx.getObject('JobDefinition', call.JobDefinition);
  if (!definition) return undefined;
  const d = definition.data;
  // Mandatory values may come from mappings when the step starts: here every parameter takes its default.
  const declared = ((d.Parameters as DefinitionParameter[] | null) ?? []).map((p) => ({ ...p, Optional: true }));
  return k.submit(
    tx,
    {
      definition,
      queue: call.Queue ?? (d.DefaultQueue as string),
      priority: call.Priority ?? (d.Priority as number | null) ?? 50,
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
    fx,
  );
}

/** The newest job of each slot (step index or call index) among `children`. */
function newestBySlot(
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
const stepSlot = (j: JobRecord) => j.data.chain?.step?.index;
const callSlot = (j: JobRecord) => j.data.chain?.call?.call;

async function save(tx: Store, jobs: JobRecord[]): Promise<void> {
  if (jobs.length > 0) await tx.jobs.updateMany(jobs);
}

/** The chain job was dispatched to GLOBAL.System: it waits while its first step runs. */
export async function startChain(k: Kernel, tx: Store, chain: JobRecord, now: number, fx: Effects): Promise<void> {
  chain.status = 'Waiting';
  chain.runStart ??= now;
  chain.modificationTime = now;
  await save(tx, [chain]);
  await startStep(k, tx, chain, 0, now, fx);
}

/** Runs step `index` of the chain (after the last one the chain is Completed). */
async function startStep(
  k: Kernel,
  tx: Store,
  chain: JobRecord,
  index: number,
  now: number,
  fx: Effects,
): Promise<void> {
  const structure = await structureOf(tx, chain);
  if (index >= structure.steps.length) {
    await endChain(k, tx, chain, 'Completed', now, fx);
    return;
  }
  const step = structure.steps[index] as ChainStepSpec;
  let stepJob = newestBySlot(await tx.jobs.listChildren(chain.jobId), stepSlot).get(index);
  if (stepJob && isFinal(stepJob.status) && (stepJob.data.chain?.step?.runs ?? 0) === 0) {
    // Ended before it ran (canceled by hand): the handlers decide as if its calls had ended so.
    await applyDecision(
      k,
      tx,
      chain,
      index,
      stepJob,
      decide([stepJob.status as CallOutcome], step, structure),
      now,
      fx,
    );
    return;
  }
  if (!stepJob || isFinal(stepJob.status))
    stepJob = await createStepJobs(k, tx, chain, index, now, fx, stepJob?.data.chain?.step?.runs ?? 0);
  if (stepJob.status === 'Disabled' || !(await holds(tx, step.Precondition, chain, now))) {
    const status = stepJob.status === 'Disabled' ? 'Ignored' : 'Skipped';
    await closeDescendants(
      tx,
      stepJob,
      status,
      now,
      `Step ${step.Name} ${status === 'Ignored' ? 'disabled' : 'precondition false'}`,
    );
    await k.finish(tx, stepJob, { status }, now, fx);
    await startStep(k, tx, chain, index + 1, now, fx);
    return;
  }
  const runs = (stepJob.data.chain?.step?.runs ?? 0) + 1;
  if (runs > (step.MaxRestarts ?? DEFAULT_MAX_RUNS)) {
    stepJob.data.notes.push(`Step ${step.Name} ran ${runs - 1} times, its limit`);
    await closeDescendants(tx, stepJob, 'Skipped', now, 'Step limit reached');
    await k.finish(tx, stepJob, { status: 'Error' }, now, fx);
    await endChain(k, tx, chain, 'Error', now, fx);
    return;
  }
  stepJob.status = 'Waiting';
  stepJob.runStart = now;
  stepJob.modificationTime = now;
  stepJob.data.chain = { step: { index, runs, name: step.Name } };
  await save(tx, [stepJob]);
  const calls = [...newestBySlot(await tx.jobs.listChildren(stepJob.jobId), callSlot).values()];
  await startCalls(k, tx, chain, stepJob, step, calls, now, fx);
}

/** Moves the step's Chained calls into the pending flow (or to Ignored / Skipped), then checks whether the step is done. */
async function startCalls(
  k: Kernel,
  tx: Store,
  chain: JobRecord,
  stepJob: JobRecord,
  step: ChainStepSpec,
  calls: JobRecord[],
  now: number,
  fx: Effects,
): Promise<void> {
  for (const c of calls) {
    const spec = step.Calls[c.data.chain?.call?.call ?? -1];
    if (c.status === 'Disabled') {
      closeAs(c, 'Ignored', now, 'Disabled when its step ran');
      continue;
    }
    if (c.status !== 'Chained' || !spec) continue; // canceled by hand before its step ran
    if (!(await holds(tx, spec.Precondition, chain, now))) {
      closeAs(c, 'Skipped', now, 'Precondition false');
      if (c.data.chain?.structure) await closeDescendants(tx, c, 'Skipped', now, 'Its chain was skipped');
    } else {
      const problem = await applyMappings(tx, chain, spec, c);
      c.requestedStart = now;
      if (problem) closeAs(c, 'Error', now, problem);
      else if (spec.HoldOnSubmit) {
        c.status = 'Held';
        c.modificationTime = now;
      } else await k.settle(tx, c, now, fx);
    }
  }
  await save(tx, calls);
  if (calls.every((c) => isFinal(c.status))) await stepDone(k, tx, stepJob, now, fx);
}

function closeAs(job: JobRecord, status: JobStatus, now: number, note: string): void {
  job.status = status;
  job.runEnd = now;
  job.modificationTime = now;
  job.data.notes.push(note);
}

/** Sets every not yet started descendant of `job` to `status` (canceling or skipping what a chain will not run). */
export async function closeDescendants(
  tx: Store,
  job: JobRecord,
  status: JobStatus,
  now: number,
  note: string,
): Promise<void> {
  for (const child of await tx.jobs.listChildren(job.jobId)) {
    if (
      !INITIAL.includes(child.status) &&
      !(PENDING.includes(child.status) && child.status !== 'Dispatched' && child.status !== 'Assigned')
    )
      continue;
    closeAs(child, status, now, note);
    await save(tx, [child]);
    await closeDescendants(tx, child, status, now, note);
  }
}

/** A precondition: none holds; a time window must be open (or closed, as asked) now; an expression must be true. */
async function holds(
  tx: Store,
  pre: PreconditionSpec | null | undefined,
  chain: JobRecord,
  now: number,
): Promise<boolean> {
  if (!pre) return true;
  if (pre.TimeWindow) {
    const window = await loadWindow(tx, pre.TimeWindow, pre.TimeZone ?? chain.data.zone);
    const open = window !== undefined && isOpen(window, now);
    return (pre.TimeWindowStatus ?? 'Open') === 'Open' ? open : !open;
  }
  if (pre.Expression) {
    const values = emptyRecord<string | number | null>();
    for (const p of chain.data.parameters) values[p.Name] = currentValue(p);
    try {
      return evalCondition(parseCondition(pre.Expression), values);
    } catch (e) {
      chain.data.notes.push(`Precondition ${JSON.stringify(pre.Expression)}: ${(e as Error).message}`);
      return false;
    }
  }
  return true;
}

/** Sets the call's In values from its mappings; returns why it cannot run, or undefined. */
async function applyMappings(
  tx: Store,
  chain: JobRecord,
  spec: ChainCallSpec,
  call: JobRecord,
): Promise<string | undefined> {
  const structure = await structureOf(tx, chain);
  let steps: Map<number, JobRecord> | undefined;
  for (const m of spec.ParameterMappings ?? []) {
    const target = call.data.parameters.find((p) => p.Name === m.Parameter);
    if (!target) {
      call.data.notes.push(`Mapping to ${m.Parameter} ignored: ${call.definition} has no such parameter now`);
      continue;
    }
    let value: string | number | null = null;
    if (m.Source === 'Value') {
      if (m.Value === null || m.Value === undefined) continue;
      value = m.Value;
    } else if (m.Source === 'ChainParameter') {
      const p = chain.data.parameters.find((x) => x.Name === m.ChainParameter);
      value = p ? currentValue(p) : null;
    } else {
      steps ??= newestBySlot(await tx.jobs.listChildren(chain.jobId), stepSlot);
      const fromStep = steps.get(structure.steps.findIndex((s) => s.Name === m.FromStep));
      const fromCall = fromStep
        ? newestBySlot(await tx.jobs.listChildren(fromStep.jobId), callSlot).get((m.FromCall ?? 1) - 1)
        : undefined;
      const p = fromCall?.data.parameters.find((x) => x.Name === m.FromParameter);
      value = p ? currentValue(p) : null;
    }
    try {
      setMappedValue(target, value, call.data.zone);
    } catch {
      return `Parameter ${m.Parameter}: ${JSON.stringify(value)} is not a ${target.DataType}`;
    }
  }
  return undefined;
}

const decide = (outcomes: CallOutcome[], step: ChainStepSpec, structure: Structure): StepDecision =>
  decideStep(outcomes, step.StatusHandlers ?? [], structure.handlers);

const asOutcome = (s: JobStatus): CallOutcome =>
  (['Completed', 'Error', 'Killed', 'Canceled', 'Unknown', 'Ignored', 'Skipped'] as JobStatus[]).includes(s)
    ? (s as CallOutcome)
    : 'Error';

/** The outcome of each call of the step: its newest job's status (a call that could not be created: Error). */
async function stepOutcomes(tx: Store, stepJob: JobRecord, step: ChainStepSpec): Promise<CallOutcome[]> {
  const calls = newestBySlot(await tx.jobs.listChildren(stepJob.jobId), callSlot);
  return step.Calls.map((_, i) => {
    const c = calls.get(i);
    return c ? asOutcome(c.status) : 'Error';
  });
}

/** Reaction to a settled job: when it is a call of a step, the step may be done. */
export async function onCallFinal(k: Kernel, tx: Store, call: JobRecord, now: number, fx: Effects): Promise<void> {
  if (call.parentJob === null || !call.data.chain?.call) return;
  const stepJob = await tx.jobs.get(call.parentJob);
  if (!stepJob) return;
  if (stepJob.status === 'Killing') {
    await settleKilling(k, tx, stepJob, now, fx);
    return;
  }
  if (stepJob.status !== 'Waiting') return;
  const calls = [...newestBySlot(await tx.jobs.listChildren(stepJob.jobId), callSlot).values()];
  if (calls.every((c) => isFinal(c.status))) await stepDone(k, tx, stepJob, now, fx);
}

/** Every call of the step is final: the handlers decide. */
async function stepDone(k: Kernel, tx: Store, stepJob: JobRecord, now: number, fx: Effects): Promise<void> {
  const chain = stepJob.parentJob === null ? undefined : await tx.jobs.get(stepJob.parentJob);
  if (chain?.status !== 'Waiting') return;
  const structure = await structureOf(tx, chain);
  const index = stepJob.data.chain?.step?.index ?? 0;
  const step = structure.steps[index] as ChainStepSpec;
  const outcomes = await stepOutcomes(tx, stepJob, step);
  await applyDecision(k, tx, chain, index, stepJob, decide(outcomes, step, structure), now, fx, outcomes);
}

async function applyDecision(
  k: Kernel,
  tx: Store,
  chain: JobRecord,
  index: number,
  stepJob: JobRecord,
  decision: StepDecision,
  now: number,
  fx: Effects,
  outcomes: CallOutcome[] = [asOutcome(stepJob.status)],
): Promise<void> {
  const structure = await structureOf(tx, chain);
  const step = structure.steps[index] as ChainStepSpec;
  const running = !isFinal(stepJob.status);
  if (running && (decision.action === 'RestartStep' || decision.action === 'RestartFromError')) {
    const runs = (stepJob.data.chain?.step?.runs ?? 1) + 1;
    if (runs <= (step.MaxRestarts ?? DEFAULT_MAX_RUNS)) {
      await rerunCalls(k, tx, chain, stepJob, step, outcomes, decision.action === 'RestartFromError', runs, now, fx);
      return;
    }
    stepJob.data.notes.push(`Step ${step.Name} ran ${runs - 1} times, its limit`);
    decision = { action: 'MarkError' };
  }
  if (running && decision.action === 'RequestRestart') {
    const id = await createOperatorMessage(
      tx,
      stepJob,
      `Step ${step.Name} of Job:${chain.jobId} (${chain.definition}) ended ${stepStatus(outcomes)}. Reply Restart to run the step again, or NoRestart.`,
      now,
    );
    stepJob.status = 'Console';
    stepJob.data.operatorMessage = id;
    stepJob.modificationTime = now;
    await save(tx, [stepJob]);
    return;
  }
  if (running) await k.finish(tx, stepJob, { status: stepStatus(outcomes) }, now, fx);
  switch (decision.action) {
    case 'GotoStep': {
      const target = structure.steps.findIndex((s) => s.Name === decision.step);
      if (target < 0) return endChain(k, tx, chain, 'Error', now, fx);
      if (target > index) await skipSteps(tx, chain, index + 1, target, now);
      return startStep(k, tx, chain, target, now, fx);
    }
    case 'MarkCompleted':
      return endChain(k, tx, chain, 'Completed', now, fx);
    case 'Continue':
      return startStep(k, tx, chain, index + 1, now, fx);
    default:
      return endChain(k, tx, chain, 'Error', now, fx);
  }
}

/** RestartStep (every call again) or RestartFromError (the calls that did not complete): new call jobs, same step job. */
async function rerunCalls(
  k: Kernel,
  tx: Store,
  chain: JobRecord,
  stepJob: JobRecord,
  step: ChainStepSpec,
  outcomes: CallOutcome[],
  failedOnly: boolean,
  runs: number,
  now: number,
  fx: Effects,
): Promise<void> {
  const index = stepJob.data.chain?.step?.index ?? 0;
  stepJob.data.chain = { step: { index, runs, name: step.Name } };
  stepJob.data.notes.push(
    `Step ${step.Name} runs again (run ${runs}${failedOnly ? ', calls that did not complete' : ''})`,
  );
  stepJob.modificationTime = now;
  await save(tx, [stepJob]);
  const calls: JobRecord[] = [];
  for (const [j, call] of step.Calls.entries()) {
    const o = outcomes[j];
    if (failedOnly && (o === 'Completed' || o === 'Ignored' || o === 'Skipped')) continue;
    const c = await createCallJob(k, tx, chain, stepJob, index, j, call, now, fx, 'Chained');
    if (c) calls.push(c);
  }
  await startCalls(k, tx, chain, stepJob, step, calls, now, fx);
}

/** Steps jumped over by GotoStep are Skipped. */
async function skipSteps(tx: Store, chain: JobRecord, from: number, to: number, now: number): Promise<void> {
  const steps = newestBySlot(await tx.jobs.listChildren(chain.jobId), stepSlot);
  for (let i = from; i < to; i++) {
    const s = steps.get(i);
    if (!s || isFinal(s.status)) continue;
    closeAs(s, 'Skipped', now, 'Jumped over by GotoStep');
    await save(tx, [s]);
    await closeDescendants(tx, s, 'Skipped', now, 'Jumped over by GotoStep');
  }
}

/** Ends the chain: what it will not run is Skipped, then the chain job takes its final status. */
async function endChain(
  k: Kernel,
  tx: Store,
  chain: JobRecord,
  status: JobStatus,
  now: number,
  fx: Effects,
): Promise<void> {
  await closeDescendants(tx, chain, 'Skipped', now, `The chain ended ${status}`);
  const fresh = (await tx.jobs.get(chain.jobId)) ?? chain;
  if (isFinal(fresh.status)) return;
  await k.finish(tx, fresh, { status }, now, fx);
}

/** The operator's reply to a step's RequestRestart: run the step again, or take the default. */
async function settleStepRequest(
  k: Kernel,
  tx: Store,
  stepJob: JobRecord,
  restart: boolean,
  user: string,
  now: number,
  fx: Effects,
): Promise<void> {
  const chain = stepJob.parentJob === null ? undefined : await tx.jobs.get(stepJob.parentJob);
  if (!chain) return;
  const structure = await structureOf(tx, chain);
  const index = stepJob.data.chain?.step?.index ?? 0;
  const step = structure.steps[index] as ChainStepSpec;
  const outcomes = await stepOutcomes(tx, stepJob, step);
  stepJob.status = 'Waiting';
  stepJob.data.notes.push(`${user} replied ${restart ? 'Restart' : 'NoRestart'}`);
  delete stepJob.data.operatorMessage;
  await applyDecision(
    k,
    tx,
    chain,
    index,
    stepJob,
    restart ? { action: 'RestartStep' } : { action: 'MarkError' },
    now,
    fx,
    outcomes,
  );
}

/**
 * Kill reaches the children: what has not started is Canceled, running agent jobs are killed, in-server jobs
 * stop; the chain (or step) is Killed once all of them are final.
 */
export async function killTree(k: Kernel, tx: Store, job: JobRecord, now: number, fx: Effects): Promise<void> {
  job.status = 'Killing';
  job.modificationTime = now;
  await save(tx, [job]);
  for (const child of await tx.jobs.listChildren(job.jobId)) {
    if (isFinal(child.status)) continue;
    if (
      INITIAL.includes(child.status) ||
      (PENDING.includes(child.status) && child.status !== 'Dispatched' && child.status !== 'Assigned')
    ) {
      closeAs(child, 'Canceled', now, `Canceled: Job:${job.jobId} was killed`);
      await save(tx, [child]);
      await closeDescendants(tx, child, 'Canceled', now, `Canceled: Job:${job.jobId} was killed`);
    } else if (child.data.chain?.structure || child.data.chain?.step) {
      await killTree(k, tx, child, now, fx);
    } else if (child.processServer === SYSTEM_SERVER) {
      fx.stopSystem.push(child.jobId);
      closeAs(child, 'Killed', now, `Killed with Job:${job.jobId}`);
      await save(tx, [child]);
    } else if (child.processServer !== null && child.status !== 'Killing') {
      fx.messages.push({
        processServer: child.processServer,
        message: { type: 'kill', jobId: child.jobId, attempt: child.attempt },
      });
      child.status = 'Killing';
      child.modificationTime = now;
      await save(tx, [child]);
    }
  }
  await settleKilling(k, tx, job, now, fx);
}

/** A chain or step being killed becomes Killed once all its children are final; the chain above may follow. */
async function settleKilling(k: Kernel, tx: Store, job: JobRecord, now: number, fx: Effects): Promise<void> {
  if (job.status !== 'Killing') return;
  const children = await tx.jobs.listChildren(job.jobId);
  if (!children.every((c) => isFinal(c.status))) return;
  await k.finish(tx, job, { status: 'Killed' }, now, fx);
  if (job.data.chain?.step && job.parentJob !== null) {
    const chain = await tx.jobs.get(job.parentJob);
    if (chain) await settleKilling(k, tx, chain, now, fx);
  }
}

/** Reaction to a created job: a chain job's step and call jobs (a new chain job, or one restarted as a copy). */
export async function createChainJobs(k: Kernel, tx: Store, chain: JobRecord, now: number, fx: Effects): Promise<void> {
  const { steps } = await structureOf(tx, chain);
  // A chain of thousands of jobs is created in one transaction; between steps other requests are served (those
  // that need the database wait for the commit).
  const slice = loopYielder();
  for (let i = 0; i < steps.length; i++) {
    await slice();
    await createStepJobs(k, tx, chain, i, now, fx);
  }
}

/** Reaction to a canceled chain or step: what has not started of it is canceled too. */
export const cancelTree = (_k: Kernel, tx: Store, job: JobRecord, now: number): Promise<void> =>
  closeDescendants(tx, job, 'Canceled', now, `Canceled with Job:${job.jobId}`);

/** Reaction to a reply: a step waiting in Console after RequestRestart runs again or takes the default. */
export async function answerStep(k: Kernel, tx: Store, a: Answer, now: number, fx: Effects): Promise<boolean> {
  if (a.job?.status !== 'Console' || !a.job.data.chain?.step) return false;
  await settleStepRequest(k, tx, a.job, a.reply === 'Restart', a.user, now, fx);
  return true;
}
