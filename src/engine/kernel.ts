import type { ChainStructure, JobRecord, RecurrenceInfo } from '../domain/job.ts';
import type { KernelAction } from '../domain/job-actions.ts';
import { firstOccurrence } from '../domain/recurrence.ts';
import { decideRestart } from '../domain/restart.ts';
import { nextOpening, openingEnd } from '../domain/time-window.ts';
import { invalid } from '../errors.ts';
import type { JobStatus } from '../model/fields.ts';
import { businessKey } from '../model/keys.ts';
import type { Store } from '../store/store.ts';
import { chainMaxRunTime, chainStructure } from './definition-snapshot.ts';
import type { Effects } from './effects.ts';
import { newJobRow, type RerunOptions, rerunCopy } from './job-rows.ts';
import { KernelActions } from './kernel-actions.ts';
import type { ActOptions, Answer, FinalOutcome, Marked, NewJob } from './kernel-types.ts';
import { createOperatorMessage } from './operator-message.ts';
import { move } from './status-move.ts';
import { loadFrame } from './submit-frames.ts';
import { loadWindow } from './windows.ts';

export type { Effects } from './effects.ts';
export type { ActOptions, Answer, FinalOutcome, Marked, NewJob } from './kernel-types.ts';
export { move } from './status-move.ts';

/**
 * The lifecycle kernel (docs/architecture.md §6a): every job is created, moved on and ended here, inside the
 * caller's transaction (`tx`, `now`, and the `effects` carried out after the commit). Its entry points are
 * `submit`, `act` (a person's action), `finish` (a report: an agent's, a System job's, a reply), `settle` (a job
 * leaves its initial or held state) and `answer` (a reply reaches its sender); the dispatcher (tick) and the agent
 * reports call them too. What else follows from a transition — a chain's next step, events, recurrences, locks,
 * questions, alerts — is a reaction registered on the kernel when the engine is built, never a module it imports.
 */

/** A reaction: runs inside the transaction of the transition it reacts to. */
export type Reaction<E> = (kernel: Kernel, tx: Store, event: E, now: number, effects: Effects) => Promise<unknown>;

export interface Reactions {
  /** A job was submitted or rerun and its row written (a chain makes its step and call jobs). */
  created: Reaction<JobRecord>[];
  /** A submitted job's first occurrence is now (a recurrence submits its successor). */
  due: Reaction<JobRecord>[];
  /** A job reached a final status, whatever follows (a restart, a restart request). */
  final: Reaction<{ job: JobRecord; status: JobStatus }>[];
  /** A job is final and nothing restarts it: its place is done (a chain's step may be). */
  settled: Reaction<JobRecord>[];
  /** Cancel reaches a job with children: what has not started of them is canceled first. */
  cancelTree: Reaction<JobRecord>[];
  /** Kill reaches a job with children: the reaction kills the tree and ends the job. */
  killTree: Reaction<JobRecord>[];
  /** A reply to an operator message reached what sent it; a reaction that took it returns true. */
  answered: Reaction<Answer>[];
  /**
   * A person set a final job to another final status (markcompleted, markerror); none of `final` and `settled` runs
   * for it (its restart behaviour, events and handlers ran when it ended). A chain it stopped may go on.
   */
  marked: Reaction<Marked>[];
}

/** Thrown by `submit` outside the serial loop for a job that must be created in it (see SerialLoop.submit). */
export class NeedsSerialLoop extends Error {}

export class Kernel {
  private readonly reactions: Reactions;
  /** Whether transactions run in the engine's serial loop (the fast submit path runs beside it). */
  readonly serial: boolean;
  /** A person's actions on a job, which move it through the transitions below. */
  private readonly actions: KernelActions;

  constructor(reactions?: Reactions, serial = true) {
    this.reactions = reactions ?? {
      created: [],
      due: [],
      final: [],
      settled: [],
      cancelTree: [],
      killTree: [],
      answered: [],
      marked: [],
    };
    this.serial = serial;
    this.actions = new KernelActions({
      finish: (tx, job, outcome, now, effects) => this.finish(tx, job, outcome, now, effects),
      settle: (tx, job, now, effects) => this.settle(tx, job, now, effects),
      rerun: (tx, job, now, effects, options) => this.rerun(tx, job, now, effects, options),
      emitTree: (kind, tx, job, now, effects) => this.emit(kind, tx, job, now, effects),
      emitMarked: (tx, marked, now, effects) => this.emit('marked', tx, marked, now, effects),
    });
  }

  /** Registers a reaction (at engine construction); reactions of a kind run in the order they were registered. */
  on<K extends keyof Reactions>(kind: K, reaction: Reactions[K][number]): void {
    const list: unknown[] = this.reactions[kind];
    list.push(reaction);
  }

  /** The same kernel for a transaction outside the serial loop. */
  outsideLoop(): Kernel {
    return new Kernel(this.reactions, false);
  }

  private async emit<K extends keyof Reactions>(
    kind: K,
    tx: Store,
    event: Parameters<Reactions[K][number]>[2],
    now: number,
    effects: Effects,
  ): Promise<boolean> {
    let taken = false;
    for (const r of this.reactions[kind] as Reaction<typeof event>[])
      if ((await r(this, tx, event, now, effects)) === true) taken = true;
    return taken;
  }

  /** Inserts a new job; picks its ids from the sequences. */
  async insert(
    tx: Store,
    job: Omit<JobRecord, 'jobId' | 'uniqueId'>,
    effects: Effects,
    ownGroup = false,
    /** A chain job's steps and handlers, kept apart from its row. */
    structure?: ChainStructure,
  ): Promise<JobRecord> {
    // The first job of a recurrence names its JobGroup after itself.
    const record = await tx.jobs.insertNew(job, ownGroup);
    if (structure) await tx.jobs.putChainStructure(record, structure);
    if (record.status === 'Queued') effects.dispatch = true;
    if (record.status === 'Scheduled') effects.wakeAt.push(record.requestedStart);
    return record;
  }

  /**
   * Creates a job (and, through the reactions, a chain's step and call jobs) in the caller's transaction. Shared by
   * submit, resubmit, chains and auto-submit on events.
   */
  async submit(tx: Store, n: NewJob, now: number, effects: Effects): Promise<JobRecord> {
    const d = n.definition.data;
    // A chain, or a job that waits for events, is created in the serial loop: an event raised at the same moment
    // is then seen either by the submit or by the release of waiting jobs.
    if (!this.serial && (d.JobDefinitionType === 'JobChain' || (d.WaitEvents ?? []).length > 0))
      throw new NeedsSerialLoop();
    let start = n.requestedStart ?? now;
    let recurrence: RecurrenceInfo | undefined;
    if (n.submitFrame !== undefined) {
      start = await this.firstOccurrence(tx, n, n.submitFrame, start);
      recurrence = { frame: n.submitFrame, anchor: start, occurrence: start };
    }
    const job = newJobRow(n, start, recurrence, now);
    let structure: ChainStructure | undefined;
    if (job.data.spec.type === 'JobChain') {
      structure = await chainStructure(tx, n.definition, n.chainDepth ?? 0);
      job.data.chain = { ...job.data.chain, structure: { depth: n.chainDepth ?? 0 } };
      if (n.maxRunTime === undefined)
        job.data.spec.maxRunTime = (await chainMaxRunTime(tx, n.definition)) ?? job.data.spec.maxRunTime ?? null;
    }
    if (n.initialStatus === undefined) {
      if (n.hold) job.status = 'Held';
      else await this.settle(tx, job as JobRecord, now, effects);
    }
    const record = await this.insert(tx, job, effects, recurrence !== undefined, structure);
    await this.emit('created', tx, record, now, effects);
    // A recurrence whose first occurrence is now: its successor is due now too (later ones: when they come).
    if (record.data.recurrence && record.status !== 'Scheduled' && record.status !== 'Held') {
      await this.emit('due', tx, record, now, effects);
      await tx.jobs.updateMany([record]);
    }
    return record;
  }

  /** The first occurrence of the SubmitFrame at or after `start` within the definition's window; 400 when none. */
  private async firstOccurrence(tx: Store, n: NewJob, key: string, start: number): Promise<number> {
    const frame = await loadFrame(tx, key, n.zone);
    if (!frame) throw invalid(`Field "SubmitFrame": ${businessKey('SubmitFrame', key)} does not exist`);
    const d = n.definition.data;
    const windowKey = d.TimeWindow;
    const jobWindow = windowKey ? await loadWindow(tx, windowKey, d.TimeZone ?? n.zone) : undefined;
    const first = firstOccurrence(frame, start, jobWindow);
    if (first === undefined)
      throw invalid(`Field "SubmitFrame": ${businessKey('SubmitFrame', key)} never fires after the requested start`);
    return first;
  }

  /**
   * Where a job waits once nothing holds it back by hand (submit, release, a due start time, a raised event, a chain
   * call whose step began). The gates in the order a job passes them: its start time (Scheduled), its wait events
   * (EventWait), whether its time window opens at all within two years (else Never, final), its queue's hold
   * (QueueHeld); then it is Queued and the dispatcher checks the rest (windows now, locks, limits).
   * Sets `job.status`; the caller writes the job.
   */
  async settle(tx: Store, job: JobRecord, now: number, effects: Effects): Promise<void> {
    job.modificationTime = now;
    if (job.requestedStart > now) {
      move(job, 'Scheduled', now);
      effects.wakeAt.push(job.requestedStart);
      return;
    }
    for (const w of job.data.spec.waitEvents ?? [])
      if ((await tx.events.raised(w.event)) === undefined) {
        move(job, 'EventWait', now);
        return;
      }
    const key = job.data.spec.timeWindow;
    const window = key ? await loadWindow(tx, key, job.data.spec.windowZone ?? job.data.zone) : undefined;
    const deadline = window ? openingEnd(window, now) : undefined;
    if (window && deadline === undefined && nextOpening(window, now) === undefined) {
      move(job, 'Never', now);
      job.runEnd = now;
      job.data.notes.push(`Its time window ${key} does not open within two years`);
      return;
    }
    const queue = await tx.getObject('Queue', job.queue);
    move(job, queue?.data.Held === true ? 'QueueHeld' : 'Queued', now);
    if (job.status === 'Queued') effects.dispatch = true;
    // Still waiting when the opening it waits for is over → overdue (the dispatcher looks then).
    if (deadline !== undefined) {
      job.data.windowClosesAt = deadline;
      effects.overdueAt.push(deadline);
    }
  }

  /**
   * Submits a copy of `job` that starts over (restart, resubmit of the same values, automatic restart, the next
   * occurrence of a recurrence): the same definition snapshot, parameters with their Out values cleared, a fresh
   * pending status. The original keeps its own. An automatic restart keeps the job's place (its chain step, its
   * recurrence's group); an operator's restart makes a job of its own; a recurrence's occurrence stays in its group.
   * A chain's copy gets new step and call jobs.
   */
  async rerun(tx: Store, job: JobRecord, now: number, effects: Effects, options: RerunOptions): Promise<JobRecord> {
    const { copy, place } = rerunCopy(job, now, options);
    // The copy's history starts with where it came from; a user's restart keeps naming the user.
    const outer = tx.jobs.currentCause();
    const detail = options.recurrence
      ? `Next occurrence of the recurrence of Job:${job.jobId}`
      : `Restart of Job:${job.jobId}`;
    const cause = {
      user: outer?.user ?? null,
      cause: outer?.cause ?? (options.recurrence ? 'recurrence' : 'restart'),
      detail,
    };
    const next = await tx.jobs.withCause(cause, async () => {
      await this.settle(tx, copy as JobRecord, now, effects);
      const structure = place?.structure ? await tx.jobs.chainStructure(job) : undefined;
      return this.insert(tx, copy, effects, false, structure);
    });
    // Its chain's step jobs are created as on submit.
    await this.emit('created', tx, next, now, effects);
    return next;
  }

  /**
   * Moves a job to a final status and applies its definition's restart behaviour (Restart-like actions submit a
   * new job while MaxStarts allows; RequestRestart parks it in ConsoleRestart for an operator); then the reactions
   * to a final status run (events raised, locks released, a recurrence ended, a question closed) and, when nothing
   * restarts it, those to a settled job (a chain call's step moves on).
   */
  async finish(tx: Store, job: JobRecord, outcome: FinalOutcome, now: number, effects: Effects): Promise<void> {
    move(job, outcome.status, now);
    job.runEnd = outcome.runEnd ?? now;
    if (outcome.returnCode !== undefined) job.returnCode = outcome.returnCode;
    if (outcome.notes) job.data.notes.push(...outcome.notes);
    const spec = job.data.spec;
    const decision = decideRestart(outcome.status, spec.restart, job.starts, spec.maxStarts);
    if (decision === 'request') {
      const text = `Job:${job.jobId} (${job.definition}) ended ${outcome.status}. Reply Restart to run it again, or NoRestart.`;
      const messageId = await createOperatorMessage(tx, job, text, now);
      job.data.notes.push(
        `Ended ${outcome.status}; restart requested: waiting for a reply to OperatorMessage:${messageId}`,
      );
      job.data.pendingFinal = outcome.status;
      job.data.operatorMessage = messageId;
      move(job, 'ConsoleRestart', now);
    } else if (decision === 'restart') {
      const next = await this.rerun(tx, job, now, effects, { keepPlace: true, starts: job.starts + 1 });
      job.data.notes.push(`Ended ${outcome.status}; restarted as Job:${next.jobId}`);
    }
    await tx.jobs.updateMany([job]);
    if (spec.keepJobs !== null) effects.purge.set(job.definition, spec.keepJobs);
    effects.dispatch = true;
    await this.emit('final', tx, { job, status: outcome.status }, now, effects);
    if (decision === 'none') await this.emit('settled', tx, job, now, effects);
  }

  /** A reply reached its sender; returns whether something was waiting for it. */
  async answer(tx: Store, a: Omit<Answer, 'job'>, now: number, effects: Effects): Promise<boolean> {
    const sender = /^Job:(\d+)$/.exec(a.sender);
    const job = sender ? await tx.jobs.get(Number(sender[1])) : undefined;
    if (sender && (job === undefined || job.data.operatorMessage !== a.message)) return false;
    if (job?.status === 'ConsoleRestart') {
      await this.answerRestart(tx, job, a.reply === 'Restart', a.user, now, effects);
      return true;
    }
    return this.emit('answered', tx, { ...a, ...(job ? { job } : {}) }, now, effects);
  }

  /** Ends a job in ConsoleRestart with the final status it reached, after the operator's reply. */
  private async answerRestart(
    tx: Store,
    job: JobRecord,
    restart: boolean,
    user: string,
    now: number,
    effects: Effects,
  ): Promise<void> {
    const status = job.data.pendingFinal ?? 'Error';
    delete job.data.pendingFinal;
    move(job, status, now);
    if (restart) {
      const next = await this.rerun(tx, job, now, effects, { keepPlace: true, submittedBy: user, starts: 0 });
      job.data.notes.push(`${user} replied Restart; restarted as Job:${next.jobId}`);
    } else job.data.notes.push(`${user} replied NoRestart`);
    await tx.jobs.updateMany([job]);
    if (job.data.spec.keepJobs !== null) effects.purge.set(job.definition, job.data.spec.keepJobs);
    if (!restart) await this.emit('settled', tx, job, now, effects);
  }

  /**
   * A person's action on a job (docs/architecture.md §6), in the status where it applies (the caller checked).
   * Returns the job, or for restart the new one.
   */
  act(
    tx: Store,
    job: JobRecord,
    action: KernelAction,
    options: ActOptions,
    now: number,
    effects: Effects,
  ): Promise<JobRecord> {
    return this.actions.act(tx, job, action, options, now, effects);
  }

  /** Deletes jobs (final ones) and, after the commit, their files. */
  async remove(tx: Store, jobIds: number[], effects: Effects): Promise<void> {
    await tx.jobs.delete(jobIds);
    effects.removeFiles.push(...jobIds);
  }
}
