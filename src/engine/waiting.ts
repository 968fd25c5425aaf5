import { type DispatchState, placeCandidate, Slots } from '../domain/dispatch-plan.ts';
import type { JobRecord } from '../domain/job.ts';
import { isFinal, OCCUPYING } from '../domain/job-status.ts';
import { type FormatDate, plannerReason, reason, type WaitReason, windowReason } from '../domain/wait-reasons.ts';
import type { Store } from '../store/store.ts';
import { candidateOf, type DispatchContext, loadDispatchState } from './dispatcher.ts';
import { type GateBlocker, GateView } from './window-and-lock-gates.ts';

/** A job's status changes a few dozen times at most; hold/release loops are capped here. */
const MAX_HISTORY = 10_000;

/**
 * Why jobs wait now (docs/architecture.md §8), asked of the engine's own checks and changing nothing: the gates a
 * job passes on its way to Queued (its start time, a hold, its queue's hold, its events, its chain), then for a
 * Queued job the dispatcher's gates (its window, its locks) and the planner's checks (`placeCandidate`) against
 * the state a dispatch pass loads (`loadDispatchState`, the jobs holding slots). The state is loaded once for all
 * the jobs asked about, and only when one of them is Queued or in LockWait. `agentReady` is the whole cluster's
 * view: an agent connected to another node is not disconnected, that node dispatches to it.
 */
export class WaitExplainer {
  private readonly store: Store;
  private readonly now: number;
  private readonly ctx: Pick<DispatchContext, 'agentReady'>;
  private readonly gates: GateView;
  private planner: Promise<{ state: DispatchState; slots: Slots }> | undefined;

  constructor(store: Store, now: number, ctx: Pick<DispatchContext, 'agentReady'>) {
    this.store = store;
    this.now = now;
    this.ctx = ctx;
    this.gates = new GateView(store, now);
  }

  /** Why `job` waits; empty when it does not (it runs, it ended, or nothing keeps it from the next pass). */
  async reasons(job: JobRecord, date: FormatDate): Promise<WaitReason[]> {
    switch (job.status) {
      case 'Scheduled':
        return [
          reason('ScheduledStart', `It is scheduled to start at ${date(job.requestedStart)}`, null, job.requestedStart),
        ];
      case 'Held':
        return [await this.hold(job, date)];
      case 'QueueHeld':
        return [plannerReason({ code: 'QueueHeld', queue: job.queue }, date)];
      case 'EventWait':
        return this.events(job);
      case 'Chained':
        return this.chain(job);
      case 'Queued':
      case 'LockWait':
        return this.dispatch(job, date);
      default:
        return [];
    }
  }

  /** Who held it: the last change to Held in its history (a person's hold or HoldOnSubmit, or the engine's). */
  private async hold(job: JobRecord, date: FormatDate): Promise<WaitReason> {
    const entries = await this.store.jobs.history(job.jobId, MAX_HISTORY);
    const held = entries.filter((e) => e.to === 'Held').at(-1);
    if (!held) return reason('Hold', 'It is held', null);
    if (held.user === null)
      return reason('Hold', `Held by the engine (${held.detail ?? held.cause}) at ${date(held.time)}`, null);
    return reason('Hold', `Held by User:${held.user} (${held.cause}) at ${date(held.time)}`, `User:${held.user}`);
  }

  /** The wait events not raised yet, as the kernel's settle checks them. */
  private async events(job: JobRecord): Promise<WaitReason[]> {
    const found: WaitReason[] = [];
    for (const w of job.data.spec.waitEvents ?? [])
      if ((await this.store.events.raised(w.event)) === undefined) {
        const key = `EventDefinition:${w.event}`;
        found.push(reason('EventWait', `It waits for an event of ${key} to be raised`, key));
      }
    return found;
  }

  /**
   * A chain's step or call that has not started: it waits for the step its chain runs now, else for the step
   * before its own, else (the chain not started yet) for its chain.
   */
  private async chain(job: JobRecord): Promise<WaitReason[]> {
    const parent = job.parentJob === null ? undefined : await this.store.jobs.get(job.parentJob);
    if (!parent) return [];
    const isCall = job.data.chain?.call !== undefined;
    const step = isCall ? parent : job;
    const chain = isCall
      ? parent.parentJob === null
        ? undefined
        : await this.store.jobs.get(parent.parentJob)
      : parent;
    if (!chain || step.status !== 'Chained') return [];
    const who = isCall ? `Its step "${step.description}" (Job:${step.jobId})` : 'It';
    const steps = (await this.store.jobs.listChildren(chain.jobId)).filter((j) => j.data.chain?.step !== undefined);
    const running = steps.find((s) => s.status !== 'Chained' && s.status !== 'Disabled' && !isFinal(s.status));
    const index = step.data.chain?.step?.index ?? 0;
    const before = steps
      .filter((s) => s.data.chain?.step?.index === index - 1)
      .reduce<JobRecord | undefined>((a, s) => (a && a.jobId > s.jobId ? a : s), undefined);
    const waitsFor = running ?? before;
    if (!waitsFor)
      return [
        reason('ChainPredecessor', `${who} waits for its chain Job:${chain.jobId} to start`, `Job:${chain.jobId}`),
      ];
    const object = `Job:${waitsFor.jobId}`;
    return [
      reason('ChainPredecessor', `${who} waits for step "${waitsFor.description}" (${object}) to finish`, object),
    ];
  }

  /** A queued job: what the dispatcher's gates and its planner would keep back if a pass ran now. */
  private async dispatch(job: JobRecord, date: FormatDate): Promise<WaitReason[]> {
    const found = (await this.gates.blockers(job)).map((b) => gateReason(b, date));
    this.planner ??= this.loadPlanner();
    const { state, slots } = await this.planner;
    const placed = placeCandidate(state, slots, candidateOf(job));
    for (const b of placed.blockers ?? []) found.push(plannerReason(b, date));
    return found;
  }

  private async loadPlanner(): Promise<{ state: DispatchState; slots: Slots }> {
    const state = await loadDispatchState(this.store, this.ctx, this.now, this.gates, []);
    return { state, slots: new Slots(state, await this.store.jobs.countActive(OCCUPYING)) };
  }
}

function gateReason(b: GateBlocker, date: FormatDate): WaitReason {
  if (b.code === 'TimeWindowClosed') return windowReason('Its time window', b.window, b.opens, date);
  const key = `Lock:${b.lock}`;
  return reason('LockWait', `${key} is held by Job:${b.holder}`, key);
}
