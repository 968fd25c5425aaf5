import type {
  ChainInfo,
  ChainStepSpec,
  ChainStructure,
  JobParameter,
  JobRecord,
  JobSpec,
  MisfirePolicy,
  OverdueAction,
  RecurrenceInfo,
  UserMessageSpec,
} from '../domain/job.ts';
import { hasChildren, SYSTEM_SERVER } from '../domain/job.ts';
import { actionApplies, type KernelAction } from '../domain/job-actions.ts';
import { isFinal, PENDING } from '../domain/job-status.ts';
import { firstOccurrence } from '../domain/recurrence.ts';
import { decideRestart } from '../domain/restart.ts';
import { nextOpening, openingEnd } from '../domain/time-window.ts';
import { invalid } from '../errors.ts';
import type { JobStatus } from '../model/fields.ts';
import { businessKey } from '../model/keys.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Effects } from './effects.ts';
import { loadFrame } from './frames.ts';
import { createOperatorMessage } from './operator-message.ts';
import { loadWindow } from './windows.ts';

export type { Effects } from './effects.ts';

/**
 * The lifecycle kernel (docs/architecture.md §6a): every job is created, moved on and ended here, inside the
 * caller's transaction (`tx`, `now`, and the effects `fx` carried out after the commit). Its entry points are
 * `submit`, `act` (a person's action), `finish` (a report: an agent's, a System job's, a reply), `settle` (a job
 * leaves its initial or held state) and `answer` (a reply reaches its sender); the dispatcher (tick) and the agent
 * reports call them too. What else follows from a transition — a chain's next step, events, recurrences, locks,
 * questions, alerts — is a reaction registered on the kernel when the engine is built, never a module it imports.
 */

/** A reaction: runs inside the transaction of the transition it reacts to. */
export type Reaction<E> = (k: Kernel, tx: Store, event: E, now: number, fx: Effects) => Promise<unknown>;

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
}

/** A reply to an operator message, on its way to its sender (`Job:<id>` or `Alert:<id>`). */
export interface Answer {
  sender: string;
  /** The operator message replied to (none for a reply to an alert itself). */
  message?: number;
  /** The waiting job, when the sender is a job still waiting for this message. */
  job?: JobRecord;
  reply: string;
  user: string;
}

export interface FinalOutcome {
  status: JobStatus;
  runEnd?: number;
  returnCode?: number | null;
  notes?: string[];
}

/** A job to create, with every choice of the submitter already checked and resolved. */
export interface NewJob {
  definition: StoredObject;
  queue: string;
  priority: number;
  /** Epoch ms; now when left out. */
  requestedStart?: number;
  zone: string;
  parameters: JobParameter[];
  hold: boolean;
  description: string | null;
  submittedBy: string;
  parentJob?: number;
  topStart?: number;
  /** Chain steps and calls start Chained (or Disabled) and move on when their step runs. */
  initialStatus?: JobStatus;
  chain?: ChainInfo;
  /** The job's own time window instead of the definition's (a chain call's TimeWindow). */
  timeWindow?: string | null;
  /** A recurrence: the job is submitted again at each occurrence of this SubmitFrame (key, View checked). */
  submitFrame?: string;
  /** How deep a chain job is nested in other chains (0 for a chain submitted by itself). */
  chainDepth?: number;
}

/** Thrown by `submit` outside the serial loop for a job that must be created in it (see SerialLoop.submit). */
export class NeedsSerialLoop extends Error {}

/** What an action needs besides the job: who acts, and the options of cancel and restart. */
export interface ActOptions {
  user: string;
  cancelRecurrence?: boolean;
  /** restart: the new job's requested start. */
  at?: number;
  /** updateJob: the final status set from outside. */
  status?: JobStatus;
}

type Rec = Record<string, unknown>;
const list = (v: unknown): Rec[] => (Array.isArray(v) ? (v as Rec[]) : []);
const MAX_DEPTH = 8;

/** Sets a job's status: the one place a status changes; the store records the transition when the row is written. */
export function move(job: JobRecord, to: JobStatus, now: number): JobRecord {
  job.status = to;
  job.modificationTime = now;
  return job;
}

/** Holds a slot on an agent: the agent must hear of a kill or of being let go. */
const onAgent = (job: JobRecord) => job.processServer !== null && job.processServer !== SYSTEM_SERVER;

export class Kernel {
  private readonly reactions: Reactions;
  /** Whether transactions run in the engine's serial loop (the fast submit path runs beside it). */
  readonly serial: boolean;

  constructor(reactions?: Reactions, serial = true) {
    this.reactions = reactions ?? {
      created: [],
      due: [],
      final: [],
      settled: [],
      cancelTree: [],
      killTree: [],
      answered: [],
    };
    this.serial = serial;
  }

  /** Registers a reaction (at engine construction); reactions of a kind run in the order they were registered. */
  on<K extends keyof Reactions>(kind: K, reaction: Reactions[K][number]): void {
    (this.reactions[kind] as unknown[]).push(reaction);
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
    fx: Effects,
  ): Promise<boolean> {
    let taken = false;
    for (const r of this.reactions[kind] as Reaction<typeof event>[])
      if ((await r(this, tx, event, now, fx)) === true) taken = true;
    return taken;
  }

  /** Inserts a new job; picks its ids from the sequences. */
  async insert(
    tx: Store,
    job: Omit<JobRecord, 'jobId' | 'uniqueId'>,
    fx: Effects,
    ownGroup = false,
    /** A chain job's steps and handlers, kept apart from its row. */
    structure?: ChainStructure,
  ): Promise<JobRecord> {
    const [uniqueId] = await tx.nextUniqueIds(1);
    const [jobId] = await tx.jobs.nextJobIds(1);
    const record: JobRecord = { ...job, jobId: jobId as number, uniqueId: uniqueId as number };
    // The first job of a recurrence names its JobGroup after itself.
    if (ownGroup) record.jobGroup = record.jobId;
    await tx.jobs.insert(record);
    if (structure) await tx.jobs.putChainStructure(record, structure);
    if (record.status === 'Queued') fx.dispatch = true;
    if (record.status === 'Scheduled') fx.wakeAt.push(record.requestedStart);
    return record;
  }

  /**
   * Creates a job (and, through the reactions, a chain's step and call jobs) in the caller's transaction. Shared by
   * submit, resubmit, chains and auto-submit on events.
   */
  async submit(tx: Store, n: NewJob, now: number, fx: Effects): Promise<JobRecord> {
    const d = n.definition.data;
    // A chain, or a job that waits for events, is created in the serial loop: an event raised at the same moment
    // is then seen either by the submit or by the release of waiting jobs.
    if (!this.serial && (d.JobDefinitionType === 'JobChain' || list(d.WaitEvents).length > 0))
      throw new NeedsSerialLoop();
    let start = n.requestedStart ?? now;
    let recurrence: RecurrenceInfo | undefined;
    if (n.submitFrame !== undefined) {
      start = await this.firstOccurrence(tx, n, start);
      recurrence = { frame: n.submitFrame, anchor: start, occurrence: start };
    }
    const job: Omit<JobRecord, 'jobId' | 'uniqueId'> = {
      definition: n.definition.key,
      partition: n.definition.partition,
      status: n.initialStatus ?? 'Queued',
      priority: n.priority,
      queue: n.queue,
      processServer: null,
      requestedStart: start,
      scheduledStart: null,
      runStart: null,
      runEnd: null,
      returnCode: null,
      parentJob: n.parentJob ?? null,
      jobGroup: null,
      topStart: n.topStart ?? start,
      attempt: 0,
      starts: 0,
      submittedBy: n.submittedBy,
      description: n.description,
      data: {
        zone: n.zone,
        parameters: n.parameters,
        notes: [],
        spec: specOf(n.definition, n.timeWindow),
        ...(n.chain ? { chain: n.chain } : {}),
        ...(recurrence ? { recurrence } : {}),
      },
      creationTime: now,
      modificationTime: now,
    };
    let structure: ChainStructure | undefined;
    if (job.data.spec.type === 'JobChain') {
      structure = await chainStructure(tx, n.definition, n.chainDepth ?? 0);
      job.data.chain = { ...job.data.chain, structure: { depth: n.chainDepth ?? 0 } };
    }
    if (n.initialStatus === undefined) {
      if (n.hold) job.status = 'Held';
      else await this.settle(tx, job as JobRecord, now, fx);
    }
    const record = await this.insert(tx, job, fx, recurrence !== undefined, structure);
    await this.emit('created', tx, record, now, fx);
    // A recurrence whose first occurrence is now: its successor is due now too (later ones: when they come).
    if (record.data.recurrence && record.status !== 'Scheduled' && record.status !== 'Held') {
      await this.emit('due', tx, record, now, fx);
      await tx.jobs.updateMany([record]);
    }
    return record;
  }

  /** The first occurrence of the SubmitFrame at or after `start` within the definition's window; 400 when none. */
  private async firstOccurrence(tx: Store, n: NewJob, start: number): Promise<number> {
    const key = n.submitFrame as string;
    const frame = await loadFrame(tx, key, n.zone);
    if (!frame) throw invalid(`Field "SubmitFrame": ${businessKey('SubmitFrame', key)} does not exist`);
    const d = n.definition.data;
    const windowKey = d.TimeWindow as string | null;
    const jobWindow = windowKey ? await loadWindow(tx, windowKey, (d.TimeZone as string | null) ?? n.zone) : undefined;
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
  async settle(tx: Store, job: JobRecord, now: number, fx: Effects): Promise<void> {
    job.modificationTime = now;
    if (job.requestedStart > now) {
      move(job, 'Scheduled', now);
      fx.wakeAt.push(job.requestedStart);
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
    if (job.status === 'Queued') fx.dispatch = true;
    // Still waiting when the opening it waits for is over → overdue (the dispatcher looks then).
    if (deadline !== undefined) {
      job.data.windowClosesAt = deadline;
      fx.overdueAt.push(deadline);
    }
  }

  /**
   * Submits a copy of `job` that starts over (restart, resubmit of the same values, automatic restart, the next
   * occurrence of a recurrence): the same definition snapshot, parameters with their Out values cleared, a fresh
   * pending status. The original keeps its own. An automatic restart keeps the job's place (its chain step, its
   * recurrence's group); an operator's restart makes a job of its own; a recurrence's occurrence stays in its group.
   * A chain's copy gets new step and call jobs.
   */
  async rerun(
    tx: Store,
    job: JobRecord,
    now: number,
    fx: Effects,
    options: {
      keepPlace: boolean;
      submittedBy?: string;
      starts: number;
      at?: number;
      recurrence?: RecurrenceInfo;
      notes?: string[];
    },
  ): Promise<JobRecord> {
    const at = options.at ?? now;
    const parameters = job.data.parameters.map((p) => ({
      ...p,
      OutValueString: null,
      OutValueNumber: null,
      OutValueDate: null,
    }));
    const chain = job.data.chain;
    const place = options.keepPlace ? chain : chain?.structure ? { structure: chain.structure } : undefined;
    const copy: Omit<JobRecord, 'jobId' | 'uniqueId'> = {
      ...job,
      status: 'Queued',
      processServer: null,
      requestedStart: at,
      scheduledStart: null,
      runStart: null,
      runEnd: null,
      returnCode: null,
      topStart: options.keepPlace ? job.topStart : at,
      parentJob: options.keepPlace ? job.parentJob : null,
      jobGroup: options.keepPlace || options.recurrence ? job.jobGroup : null,
      attempt: 0,
      starts: options.starts,
      submittedBy: options.submittedBy ?? job.submittedBy,
      data: {
        zone: job.data.zone,
        parameters,
        notes: options.notes ?? [],
        spec: job.data.spec,
        ...(place ? { chain: place } : {}),
        ...(options.recurrence ? { recurrence: options.recurrence } : {}),
      },
      creationTime: now,
      modificationTime: now,
    };
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
      await this.settle(tx, copy as JobRecord, now, fx);
      const structure = place?.structure ? await tx.jobs.chainStructure(job) : undefined;
      return this.insert(tx, copy, fx, false, structure);
    });
    // Its chain's step jobs are created as on submit.
    await this.emit('created', tx, next, now, fx);
    return next;
  }

  /**
   * Moves a job to a final status and applies its definition's restart behaviour (Restart-like actions submit a
   * new job while MaxStarts allows; RequestRestart parks it in ConsoleRestart for an operator); then the reactions
   * to a final status run (events raised, locks released, a recurrence ended, a question closed) and, when nothing
   * restarts it, those to a settled job (a chain call's step moves on).
   */
  async finish(tx: Store, job: JobRecord, outcome: FinalOutcome, now: number, fx: Effects): Promise<void> {
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
      const next = await this.rerun(tx, job, now, fx, { keepPlace: true, starts: job.starts + 1 });
      job.data.notes.push(`Ended ${outcome.status}; restarted as Job:${next.jobId}`);
    }
    await tx.jobs.updateMany([job]);
    if (spec.keepJobs !== null) fx.purge.set(job.definition, spec.keepJobs);
    fx.dispatch = true;
    await this.emit('final', tx, { job, status: outcome.status }, now, fx);
    if (decision === 'none') await this.emit('settled', tx, job, now, fx);
  }

  /** A reply reached its sender; returns whether something was waiting for it. */
  async answer(tx: Store, a: Omit<Answer, 'job'>, now: number, fx: Effects): Promise<boolean> {
    const sender = /^Job:(\d+)$/.exec(a.sender);
    const job = sender ? await tx.jobs.get(Number(sender[1])) : undefined;
    if (sender && (job === undefined || job.data.operatorMessage !== a.message)) return false;
    if (job?.status === 'ConsoleRestart') {
      await this.answerRestart(tx, job, a.reply === 'Restart', a.user, now, fx);
      return true;
    }
    return this.emit('answered', tx, { ...a, ...(job ? { job } : {}) }, now, fx);
  }

  /** Ends a job in ConsoleRestart with the final status it reached, after the operator's reply. */
  private async answerRestart(
    tx: Store,
    job: JobRecord,
    restart: boolean,
    user: string,
    now: number,
    fx: Effects,
  ): Promise<void> {
    const status = job.data.pendingFinal ?? 'Error';
    delete job.data.pendingFinal;
    move(job, status, now);
    if (restart) {
      const next = await this.rerun(tx, job, now, fx, { keepPlace: true, submittedBy: user, starts: 0 });
      job.data.notes.push(`${user} replied Restart; restarted as Job:${next.jobId}`);
    } else job.data.notes.push(`${user} replied NoRestart`);
    await tx.jobs.updateMany([job]);
    if (job.data.spec.keepJobs !== null) fx.purge.set(job.definition, job.data.spec.keepJobs);
    if (!restart) await this.emit('settled', tx, job, now, fx);
  }

  /**
   * A person's action on a job (docs/architecture.md §6), in the status where it applies (the caller checked).
   * Returns the job, or for restart the new one.
   */
  async act(
    tx: Store,
    job: JobRecord,
    action: KernelAction,
    o: ActOptions,
    now: number,
    fx: Effects,
  ): Promise<JobRecord> {
    switch (action) {
      case 'cancel':
        await this.cancel(tx, job, o.cancelRecurrence === true, now, fx);
        return job;
      case 'kill':
        await this.kill(tx, job, now, fx);
        return job;
      case 'unknown':
        if (job.processServer === SYSTEM_SERVER) fx.stopSystem.push(job.jobId);
        else if (onAgent(job) && !isFinal(job.status)) this.abandon(job, fx);
        await this.finish(tx, job, { status: 'Unknown', notes: [`Set Unknown by ${o.user}`] }, now, fx);
        return job;
      case 'hold':
        return this.save(tx, job, 'Held', now);
      case 'release':
        await this.settle(tx, job, now, fx);
        await tx.jobs.updateMany([job]);
        return job;
      case 'runnow':
        job.data.runNow = true;
        fx.runNow.push(job.jobId);
        fx.dispatch = true;
        return this.save(tx, job, 'Queued', now, fx);
      case 'restart':
        return this.rerun(tx, job, now, fx, {
          keepPlace: false,
          submittedBy: o.user,
          starts: 0,
          ...(o.at !== undefined ? { at: o.at } : {}),
        });
      case 'updateJob':
        if (o.status === undefined) {
          job.modificationTime = now;
          await tx.jobs.updateMany([job]);
          return job;
        }
        if (onAgent(job) && !job.data.scriptEnded) this.abandon(job, fx);
        await this.finish(tx, job, { status: o.status }, now, fx);
        return job;
      case 'disable':
        return this.save(tx, job, 'Disabled', now);
      case 'enable':
        return this.save(tx, job, 'Chained', now);
    }
  }

  /** Deletes jobs (final ones) and, after the commit, their files. */
  async remove(tx: Store, jobIds: number[], fx: Effects): Promise<void> {
    await tx.jobs.delete(jobIds);
    fx.removeFiles.push(...jobIds);
  }

  private abandon(job: JobRecord, fx: Effects): void {
    fx.messages.push({
      processServer: job.processServer as string,
      message: { type: 'abandon', jobId: job.jobId, attempt: job.attempt },
    });
  }

  private async save(tx: Store, job: JobRecord, status: JobStatus, now: number, fx?: Effects): Promise<JobRecord> {
    move(job, status, now);
    await tx.jobs.updateMany([job]);
    if (fx && status === 'Queued') fx.dispatch = true;
    if (fx && status === 'Scheduled') fx.wakeAt.push(job.requestedStart);
    return job;
  }

  private async cancel(tx: Store, job: JobRecord, recurrence: boolean, now: number, fx: Effects): Promise<void> {
    // Cancel reaches a chain's (or step's) children, none of which has started.
    if (hasChildren(job)) await this.emit('cancelTree', tx, job, now, fx);
    await this.finish(tx, job, { status: 'Canceled' }, now, fx);
    if (!recurrence || job.jobGroup === null) return;
    const cancelable = PENDING.filter((s) => actionApplies('cancel', s));
    for (const other of await tx.jobs.listByStatus(cancelable, { jobGroup: job.jobGroup, limit: 10_000 }))
      await this.finish(
        tx,
        other,
        { status: 'Canceled', notes: [`Recurrence canceled with Job:${job.jobId}`] },
        now,
        fx,
      );
  }

  private async kill(tx: Store, job: JobRecord, now: number, fx: Effects): Promise<void> {
    if (hasChildren(job)) {
      await this.emit('killTree', tx, job, now, fx);
      return;
    }
    if (job.processServer === SYSTEM_SERVER || job.data.scriptEnded) {
      fx.stopSystem.push(job.jobId);
      await this.finish(tx, job, { status: 'Killed' }, now, fx);
      return;
    }
    fx.messages.push({
      processServer: job.processServer as string,
      message: { type: 'kill', jobId: job.jobId, attempt: job.attempt },
    });
    await this.save(tx, job, 'Killing', now);
  }
}

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
    credential: (d.Credential as string | null) ?? null,
    userMessage: (d.UserMessage as UserMessageSpec | null) ?? null,
  };
}

/** The structure a chain job keeps (its JobChain as it is now); 400 when the chain has no JobChain or nests too deep. */
async function chainStructure(tx: Store, definition: StoredObject, depth: number): Promise<ChainStructure> {
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
