// A chain goes on after a person marks the step (or the call) that stopped it Completed (docs/architecture.md §6):
// the reaction to `marked`. Nothing here runs for markerror: what a chain did after a step is not undone.
import { stepStatus } from '../domain/chain-logic.ts';
import { itemAt } from '../domain/item-at.ts';
import type { JobRecord } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import { decideRestart } from '../domain/restart.ts';
import type { Store } from '../store/store.ts';
import { callSlot, newestBySlot, save, stepSlot, structureOf } from './chain-creation.ts';
import { applyDecision, decide, stepOutcomes } from './chains.ts';
import type { Effects, Kernel, Marked } from './kernel.ts';
import { wakeAtLimit } from './max-run-time.ts';
import { move } from './status-move.ts';

/** Reaction to a final status set by hand: a call or step marked Completed lets the chain it stopped go on. */
export async function resumeOnMarked(
  kernel: Kernel,
  tx: Store,
  { job }: Marked,
  now: number,
  effects: Effects,
): Promise<void> {
  if (job.status !== 'Completed' || job.parentJob === null) return;
  if (job.data.chain?.call) await callMarked(kernel, tx, job, now, effects);
  else if (job.data.chain?.step) await stepMarked(kernel, tx, job, now, effects);
}

/**
 * A call marked Completed. While its step still waits for other calls nothing more is needed: the step reads its
 * calls' statuses when the last one ends. A step waiting for an operator (RequestRestart) or one that ended, and
 * whose calls are now all done, decides again as if they had ended so.
 */
async function callMarked(kernel: Kernel, tx: Store, call: JobRecord, now: number, effects: Effects): Promise<void> {
  const stepJob = await tx.jobs.get(call.parentJob as number);
  const chain = stepJob?.parentJob == null ? undefined : await tx.jobs.get(stepJob.parentJob);
  if (!stepJob || !chain) return;
  const calls = newestBySlot(await tx.jobs.listChildren(stepJob.jobId), callSlot);
  if (calls.get(call.data.chain?.call?.call ?? -1)?.jobId !== call.jobId) return; // a later run of its call counts
  if (![...calls.values()].every((c) => isFinal(c.status))) return;
  const structure = await structureOf(tx, chain);
  const index = stepJob.data.chain?.step?.index ?? 0;
  const step = itemAt(structure.steps, index);
  const outcomes = await stepOutcomes(tx, stepJob, step);
  if (stepStatus(outcomes) !== 'Completed') return;
  if (stepJob.status === 'Console' && chain.status === 'Waiting') {
    // The question the step asked stays in the inbox; a reply to it finds nothing waiting any more.
    delete stepJob.data.operatorMessage;
    stepJob.status = 'Waiting';
    stepJob.data.notes.push(`Its calls were marked Completed: the step goes on`);
    await applyDecision(kernel, tx, chain, index, stepJob, decide(outcomes, step, structure), now, effects, outcomes);
    return;
  }
  if (!isFinal(stepJob.status) || !(await reopening(tx, chain, stepJob))) return;
  const from = stepJob.status;
  move(stepJob, 'Completed', now);
  stepJob.data.notes.push(`Marked Completed with its call Job:${call.jobId} (was ${from})`);
  await save(tx, [stepJob]);
  await stepMarked(kernel, tx, stepJob, now, effects);
}

/** A step marked Completed: the chain that ended on it goes on as its handlers say for a Completed step. */
async function stepMarked(kernel: Kernel, tx: Store, stepJob: JobRecord, now: number, effects: Effects): Promise<void> {
  const chain = await tx.jobs.get(stepJob.parentJob as number);
  if (!chain) return;
  const index = stepJob.data.chain?.step?.index ?? 0;
  const newest = newestBySlot(await tx.jobs.listChildren(chain.jobId), stepSlot).get(index);
  if (newest?.jobId !== stepJob.jobId) return;
  const reopen = await reopening(tx, chain, stepJob);
  if (!reopen) return;
  for (const j of reopen) {
    const from = j.status;
    move(j, 'Waiting', now);
    j.runEnd = null;
    delete j.data.operatorMessage;
    if (j.data.chain) delete j.data.chain.endedBy;
    j.data.notes.push(`Goes on (was ${from}): step ${stepJob.data.chain?.step?.name ?? index} was marked Completed`);
    await save(tx, [j]);
    wakeAtLimit(j, effects); // its MaxRunTime counts from its start again (docs/architecture.md §6b)
  }
  const structure = await structureOf(tx, chain);
  const step = itemAt(structure.steps, index);
  const fresh = (await tx.jobs.get(chain.jobId)) ?? chain;
  await applyDecision(kernel, tx, fresh, index, stepJob, decide(['Completed'], step, structure), now, effects, [
    'Completed',
  ]);
}

/**
 * The jobs to set Waiting again so that `chain` can go on after its step `stepJob`, innermost first; undefined when
 * it cannot: the chain did not end on that step (it went on, or ended otherwise), it ended Completed, or its own
 * restart behaviour already ran it again. A chain that is a call of an outer chain's step takes that step (and the
 * outer chain, when it ended on that step) with it, so its end reaches them as it would have.
 */
async function reopening(tx: Store, chain: JobRecord, stepJob: JobRecord): Promise<JobRecord[] | undefined> {
  if (chain.data.chain?.endedBy !== stepJob.jobId || chain.status === 'Completed' || !isFinal(chain.status))
    return undefined;
  const spec = chain.data.spec;
  if (decideRestart(chain.status, spec.restart, chain.starts, spec.maxStarts) !== 'none') return undefined;
  if (!chain.data.chain?.call || chain.parentJob === null) return [chain];
  const outerStep = await tx.jobs.get(chain.parentJob);
  if (!outerStep) return undefined;
  const calls = newestBySlot(await tx.jobs.listChildren(outerStep.jobId), callSlot);
  if (calls.get(chain.data.chain.call.call)?.jobId !== chain.jobId) return undefined;
  if (outerStep.status === 'Waiting') return [chain];
  if (outerStep.status === 'Console') return [chain, outerStep];
  const outer = outerStep.parentJob === null ? undefined : await tx.jobs.get(outerStep.parentJob);
  const above = outer && isFinal(outerStep.status) ? await reopening(tx, outer, outerStep) : undefined;
  return above ? [chain, outerStep, ...above] : undefined;
}
