import { type CallOutcome, decideStep, type StepDecision, stepStatus } from '../domain/chain-logic.ts';
import { itemAt } from '../domain/item-at.ts';
import type { ChainStepSpec, JobRecord } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import { closeAs, closeDescendants, settleKilling } from './chain-closing.ts';
import { applyMappings, holds } from './chain-conditions.ts';
import {
  callSlot,
  createCallJob,
  createStepJobs,
  newestBySlot,
  type Structure,
  save,
  stepSlot,
  structureOf,
} from './chain-creation.ts';
import type { Answer, Effects, Kernel } from './kernel.ts';
import { createOperatorMessage } from './operator-message.ts';

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

/** The chain job was dispatched to GLOBAL.System: it waits while its first step runs. */
export async function startChain(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  now: number,
  effects: Effects,
): Promise<void> {
  chain.status = 'Waiting';
  chain.runStart ??= now;
  chain.modificationTime = now;
  await save(tx, [chain]);
  await startStep(kernel, tx, chain, 0, now, effects);
}

/** Runs step `index` of the chain (after the last one the chain is Completed). */
async function startStep(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  index: number,
  now: number,
  effects: Effects,
): Promise<void> {
  const structure = await structureOf(tx, chain);
  if (index >= structure.steps.length) {
    await endChain(kernel, tx, chain, 'Completed', now, effects);
    return;
  }
  const step = itemAt(structure.steps, index);
  let stepJob = newestBySlot(await tx.jobs.listChildren(chain.jobId), stepSlot).get(index);
  if (stepJob && isFinal(stepJob.status) && (stepJob.data.chain?.step?.runs ?? 0) === 0 && !closedWithChain(stepJob)) {
    // Ended before it ran (canceled by hand): the handlers decide as if its calls had ended so.
    await applyDecision(
      kernel,
      tx,
      chain,
      index,
      stepJob,
      decide([stepJob.status as CallOutcome], step, structure),
      now,
      effects,
    );
    return;
  }
  if (!stepJob || isFinal(stepJob.status))
    stepJob = await createStepJobs(kernel, tx, chain, index, now, effects, stepJob?.data.chain?.step?.runs ?? 0);
  if (stepJob.status === 'Disabled' || !(await holds(tx, step.Precondition, chain, now))) {
    const status = stepJob.status === 'Disabled' ? 'Ignored' : 'Skipped';
    await closeDescendants(
      tx,
      stepJob,
      status,
      now,
      `Step ${step.Name} ${status === 'Ignored' ? 'disabled' : 'precondition false'}`,
    );
    await kernel.finish(tx, stepJob, { status }, now, effects);
    await startStep(kernel, tx, chain, index + 1, now, effects);
    return;
  }
  const runs = (stepJob.data.chain?.step?.runs ?? 0) + 1;
  if (runs > (step.MaxRestarts ?? DEFAULT_MAX_RUNS)) {
    stepJob.data.notes.push(`Step ${step.Name} ran ${runs - 1} times, its limit`);
    await closeDescendants(tx, stepJob, 'Skipped', now, 'Step limit reached');
    await kernel.finish(tx, stepJob, { status: 'Error' }, now, effects);
    await endChain(kernel, tx, chain, 'Error', now, effects, stepJob);
    return;
  }
  stepJob.status = 'Waiting';
  stepJob.runStart = now;
  stepJob.modificationTime = now;
  stepJob.data.chain = { step: { index, runs, name: step.Name } };
  await save(tx, [stepJob]);
  const calls = [...newestBySlot(await tx.jobs.listChildren(stepJob.jobId), callSlot).values()];
  await startCalls(kernel, tx, chain, stepJob, step, calls, now, effects);
}

/** Moves the step's Chained calls into the pending flow (or to Ignored / Skipped), then checks whether the step is done. */
async function startCalls(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  stepJob: JobRecord,
  step: ChainStepSpec,
  calls: JobRecord[],
  now: number,
  effects: Effects,
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
      } else await kernel.settle(tx, c, now, effects);
    }
  }
  await save(tx, calls);
  if (calls.every((c) => isFinal(c.status))) await stepDone(kernel, tx, stepJob, now, effects);
}

export const decide = (outcomes: CallOutcome[], step: ChainStepSpec, structure: Structure): StepDecision =>
  decideStep(outcomes, step.StatusHandlers ?? [], structure.handlers);

const CALL_OUTCOMES: readonly JobStatus[] = [
  'Completed',
  'Error',
  'Killed',
  'Canceled',
  'Unknown',
  'Ignored',
  'Skipped',
];
const isOutcome = (s: JobStatus): s is CallOutcome & JobStatus => CALL_OUTCOMES.includes(s);
const asOutcome = (s: JobStatus): CallOutcome => (isOutcome(s) ? s : 'Error');

/** The outcome of each call of the step: its newest job's status (a call that could not be created: Error). */
export async function stepOutcomes(tx: Store, stepJob: JobRecord, step: ChainStepSpec): Promise<CallOutcome[]> {
  const calls = newestBySlot(await tx.jobs.listChildren(stepJob.jobId), callSlot);
  return step.Calls.map((_, i) => {
    const c = calls.get(i);
    return c ? asOutcome(c.status) : 'Error';
  });
}

/** Reaction to a settled job: when it is a call of a step, the step may be done. */
export async function onCallFinal(
  kernel: Kernel,
  tx: Store,
  call: JobRecord,
  now: number,
  effects: Effects,
): Promise<void> {
  if (call.parentJob === null || !call.data.chain?.call) return;
  const stepJob = await tx.jobs.get(call.parentJob);
  if (!stepJob) return;
  if (stepJob.status === 'Killing') {
    await settleKilling(kernel, tx, stepJob, now, effects);
    return;
  }
  if (stepJob.status !== 'Waiting') return;
  const calls = [...newestBySlot(await tx.jobs.listChildren(stepJob.jobId), callSlot).values()];
  if (calls.every((c) => isFinal(c.status))) await stepDone(kernel, tx, stepJob, now, effects);
}

/** Every call of the step is final: the handlers decide. */
async function stepDone(kernel: Kernel, tx: Store, stepJob: JobRecord, now: number, effects: Effects): Promise<void> {
  const chain = stepJob.parentJob === null ? undefined : await tx.jobs.get(stepJob.parentJob);
  if (chain?.status !== 'Waiting') return;
  const structure = await structureOf(tx, chain);
  const index = stepJob.data.chain?.step?.index ?? 0;
  const step = itemAt(structure.steps, index);
  const outcomes = await stepOutcomes(tx, stepJob, step);
  await applyDecision(kernel, tx, chain, index, stepJob, decide(outcomes, step, structure), now, effects, outcomes);
}

export async function applyDecision(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  index: number,
  stepJob: JobRecord,
  decision: StepDecision,
  now: number,
  effects: Effects,
  outcomes: CallOutcome[] = [asOutcome(stepJob.status)],
): Promise<void> {
  const structure = await structureOf(tx, chain);
  const step = itemAt(structure.steps, index);
  const running = !isFinal(stepJob.status);
  if (running && (decision.action === 'RestartStep' || decision.action === 'RestartFromError')) {
    const runs = (stepJob.data.chain?.step?.runs ?? 1) + 1;
    if (runs <= (step.MaxRestarts ?? DEFAULT_MAX_RUNS)) {
      await rerunCalls(
        kernel,
        tx,
        chain,
        stepJob,
        step,
        outcomes,
        decision.action === 'RestartFromError',
        runs,
        now,
        effects,
      );
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
  if (running) await kernel.finish(tx, stepJob, { status: stepStatus(outcomes) }, now, effects);
  switch (decision.action) {
    case 'GotoStep': {
      const target = structure.steps.findIndex((s) => s.Name === decision.step);
      if (target < 0) return endChain(kernel, tx, chain, 'Error', now, effects, stepJob);
      if (target > index) await skipSteps(tx, chain, index + 1, target, now);
      return startStep(kernel, tx, chain, target, now, effects);
    }
    case 'MarkCompleted':
      return endChain(kernel, tx, chain, 'Completed', now, effects, stepJob);
    case 'Continue':
      return startStep(kernel, tx, chain, index + 1, now, effects);
    default:
      return endChain(kernel, tx, chain, 'Error', now, effects, stepJob);
  }
}

/** RestartStep (every call again) or RestartFromError (the calls that did not complete): new call jobs, same step job. */
async function rerunCalls(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  stepJob: JobRecord,
  step: ChainStepSpec,
  outcomes: CallOutcome[],
  failedOnly: boolean,
  runs: number,
  now: number,
  effects: Effects,
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
    const c = await createCallJob(kernel, tx, chain, stepJob, index, j, call, now, effects, 'Chained');
    if (c) calls.push(c);
  }
  await startCalls(kernel, tx, chain, stepJob, step, calls, now, effects);
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

/** The note on what a chain's end closed before it ran; a chain that goes on again runs those steps afresh. */
const CHAIN_END_NOTE = 'The chain ended ';
const closedWithChain = (stepJob: JobRecord): boolean =>
  stepJob.status === 'Skipped' && (stepJob.data.notes.at(-1) ?? '').startsWith(CHAIN_END_NOTE);

/**
 * Ends the chain: what it will not run is Skipped, then the chain job takes its final status. The step whose
 * outcome ended it is kept (`endedBy`): marking that step Completed lets the chain go on (chain-resume.ts).
 */
async function endChain(
  kernel: Kernel,
  tx: Store,
  chain: JobRecord,
  status: JobStatus,
  now: number,
  effects: Effects,
  stepJob?: JobRecord,
): Promise<void> {
  await closeDescendants(tx, chain, 'Skipped', now, `${CHAIN_END_NOTE}${status}`);
  const fresh = (await tx.jobs.get(chain.jobId)) ?? chain;
  if (isFinal(fresh.status)) return;
  if (stepJob) fresh.data.chain = { ...fresh.data.chain, endedBy: stepJob.jobId };
  await kernel.finish(tx, fresh, { status }, now, effects);
}

/** The operator's reply to a step's RequestRestart: run the step again, or take the default. */
async function settleStepRequest(
  kernel: Kernel,
  tx: Store,
  stepJob: JobRecord,
  restart: boolean,
  user: string,
  now: number,
  effects: Effects,
): Promise<void> {
  const chain = stepJob.parentJob === null ? undefined : await tx.jobs.get(stepJob.parentJob);
  if (!chain) return;
  const structure = await structureOf(tx, chain);
  const index = stepJob.data.chain?.step?.index ?? 0;
  const step = itemAt(structure.steps, index);
  const outcomes = await stepOutcomes(tx, stepJob, step);
  stepJob.status = 'Waiting';
  stepJob.data.notes.push(`${user} replied ${restart ? 'Restart' : 'NoRestart'}`);
  delete stepJob.data.operatorMessage;
  await applyDecision(
    kernel,
    tx,
    chain,
    index,
    stepJob,
    restart ? { action: 'RestartStep' } : { action: 'MarkError' },
    now,
    effects,
    outcomes,
  );
}

/** Reaction to a reply: a step waiting in Console after RequestRestart runs again or takes the default. */
export async function answerStep(
  kernel: Kernel,
  tx: Store,
  a: Answer,
  now: number,
  effects: Effects,
): Promise<boolean> {
  if (a.job?.status !== 'Console' || !a.job.data.chain?.step) return false;
  await settleStepRequest(kernel, tx, a.job, a.reply === 'Restart', a.user, now, effects);
  return true;
}
