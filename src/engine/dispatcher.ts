import type { ServerMessage } from '../agent/protocol.ts';
import {
  type Candidate,
  candidateLanes,
  type DispatchState,
  type Lane,
  planDispatch,
  type ProviderState,
  type QueueState,
  type ServerState,
} from '../domain/dispatch-plan.ts';
import { type JobRecord, SYSTEM_SERVER } from '../domain/job.ts';
import { OCCUPYING } from '../domain/job-status.ts';
import { outNames, parameterEnvironment } from '../domain/parameters.ts';
import type { SecretOpener } from '../security/secret-box.ts';
import { type DispatchObjectsCache, readDispatchObjects } from './dispatch-objects.ts';
import type { Store, StoredObject } from '../store/store.ts';
import { isOpen, nextChange } from '../domain/time-window.ts';
import { asks, startAsking } from './question-jobs.ts';
import { startChain } from './chains.ts';
import { CREDENTIAL_PASSWORD, CREDENTIAL_USER, CredentialResolver, type OpenCredential } from './credentials.ts';
import { consumeEvent } from './events.ts';
import { eventEnvironment } from '../domain/event-comment.ts';
import { type GateView, Gates } from './window-and-lock-gates.ts';
import { type Effects, type Kernel, move } from './kernel.ts';
import { wakeAtLimit } from './max-run-time.ts';
import { submitNextOccurrence } from './recurrences.ts';

/** Jobs read per lane and pass at most; another pass follows at once when a lane was read that far. */
const CANDIDATES_PER_PASS = 500;
/** Read beyond a lane's room at first, so that a few jobs kept back by their window or lock need no second read. */
const LANE_SLACK = 8;
const PROMOTIONS_PER_PASS = 1000;

export interface DispatchContext {
  /** Whether an agent for this process server is connected to this node and accepts work. */
  agentReady(processServer: string): boolean;
  /** The agent instance serving it from this node: recorded on the jobs dispatched to it. */
  agentInstance?(processServer: string): string | undefined;
  /** Opens credential passwords for the jobs that run with one; without it such jobs end in Error. */
  secrets?: SecretOpener;
  /** The id of this node when it shares its database with others: recorded on the System jobs it runs. */
  node?: string;
  /** Queues, providers and process servers kept between passes; read in every pass without it. */
  objects?: DispatchObjectsCache;
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * Queues, providers and process servers as the planner sees them, read inside the dispatch transaction (or, by the
 * waiting service, in a read of its own). A queue whose time window is closed releases nothing until the window
 * opens; the instants where a window opens or closes are added to `wakeAt`.
 */
export async function loadDispatchState(
  tx: Store,
  ctx: Pick<DispatchContext, 'agentReady' | 'objects'>,
  now: number,
  gates: GateView,
  wakeAt: number[],
): Promise<DispatchState> {
  const objects = ctx.objects ? await ctx.objects.read(tx) : await readDispatchObjects(tx);
  const queues = new Map<string, QueueState>();
  for (const q of objects.queues) {
    const closed = await closedQueueWindow(q, now, gates, wakeAt);
    queues.set(q.key, {
      key: q.key,
      held: q.data.Held === true,
      ...(closed ? { closed } : {}),
      executionSize: num(q.data.ExecutionSize),
      holdLevel: num(q.data.HoldLevel),
      inclusive: q.data.Inclusive === true,
      inclusiveConsole: q.data.InclusiveConsoleJobs === true,
    });
  }
  const providers: ProviderState[] = objects.providers.map((p) => ({
    queue: p.data.Queue,
    processServer: p.data.ProcessServer,
    held: p.data.Held === true,
    executionSize: num(p.data.ExecutionSize),
    holdLevel: num(p.data.HoldLevel),
    inclusive: p.data.Inclusive === true,
  }));
  const servers = new Map<string, ServerState>();
  for (const s of objects.servers) {
    const started = s.data.DesiredStatus !== 'Shutdown';
    const available = started && (s.key === SYSTEM_SERVER || ctx.agentReady(s.key));
    servers.set(s.key, {
      key: s.key,
      available,
      ...(available ? {} : { down: started ? 'AgentDisconnected' : 'ProcessServerStopped' }),
      definitionTypes: s.data.DefinitionTypes ?? [],
      executionSize: num(s.data.ExecutionSize),
    });
  }
  return { queues, providers, servers };
}

/** The queue's window when it is closed now, and when it opens (its next change). */
async function closedQueueWindow(
  q: StoredObject<'Queue'>,
  now: number,
  gates: GateView,
  wakeAt: number[],
): Promise<QueueState['closed']> {
  const key = q.data.TimeWindow;
  if (!key) return undefined;
  const w = await gates.window(key, q.data.QueueTimeZone ?? 'UTC');
  if (!w) return undefined;
  const change = nextChange(w, now);
  if (change !== undefined) wakeAt.push(change);
  return isOpen(w, now) ? undefined : { window: key, opens: change };
}

/**
 * The `run` message of an agent job's attempt: parameters as environment variables, never as script text. A
 * credential adds CREDENTIAL_USER and CREDENTIAL_PASSWORD (over parameters of those names), and its password is
 * to be masked in the job's output. The message lives in memory only: it is sent after the commit, never stored.
 */
/**
 * A starting job's events: those with ClearsEvent are consumed; the comment of each event found Raised is kept for
 * its environment (docs/architecture.md §7b).
 */
async function takeEvents(kernel: Kernel, tx: Store, job: JobRecord, now: number, effects: Effects): Promise<void> {
  const waits = job.data.spec.waitEvents ?? [];
  if (waits.length === 0) return;
  const comments: NonNullable<JobRecord['data']['eventComments']> = [];
  for (const w of waits) {
    const event = w.clears
      ? await consumeEvent(kernel, tx, w.event, job.jobId, now, effects)
      : await tx.events.raised(w.event);
    comments.push({ definition: w.event, comment: event?.data.raiserComment ?? null });
  }
  job.data.eventComments = comments;
}

export function runMessage(job: JobRecord, credential?: OpenCredential): ServerMessage {
  const env = { ...parameterEnvironment(job.data.parameters), ...eventEnvironment(job) };
  const spec = job.data.spec;
  if (spec.request) {
    // HTTP and SQL run inside the agent: parameters are substituted or bound there, the credential used directly.
    return {
      type: 'run',
      jobId: job.jobId,
      attempt: job.attempt,
      scriptType: spec.type as 'HTTP',
      script: '',
      env,
      outNames: outNames(job.data.parameters),
      request: spec.request,
      jsonPaths: spec.jsonPaths ?? {},
      ...(credential ? { auth: credential } : {}),
      ...(credential && credential.password !== '' ? { mask: [credential.password] } : {}),
    };
  }
  if (credential) {
    env[CREDENTIAL_USER] = credential.user;
    env[CREDENTIAL_PASSWORD] = credential.password;
  }
  return {
    type: 'run',
    jobId: job.jobId,
    attempt: job.attempt,
    scriptType: job.data.spec.type as 'BASH',
    script: job.data.spec.script ?? '',
    env,
    outNames: outNames(job.data.parameters),
    ...(credential && credential.password !== '' ? { mask: [credential.password] } : {}),
  };
}

/**
 * One dispatch pass, inside a transaction holding the dispatch lock: due Scheduled jobs move on (a recurrence's
 * next occurrence is submitted then), then queued jobs start in the order of docs/architecture.md §8 within every limit, their
 * time windows open and their locks free. Agent jobs are recorded Dispatched with a new attempt before their `run`
 * is sent (after the commit); System jobs go straight to Running, chains to Waiting with their first step started.
 * Returns whether another pass may find more to do.
 */
export async function dispatchPass(
  kernel: Kernel,
  tx: Store,
  ctx: DispatchContext,
  clock: () => number,
  runNow: ReadonlySet<number>,
  effects: Effects,
  sweepOverdue = false,
): Promise<{ more: boolean; started: number[] }> {
  await tx.jobs.lockDispatch();
  // The pass's writes go with its history rows at the commit (one round trip on PostgreSQL); a read of jobs sends
  // them first.
  tx.jobs.deferUpdates();
  // The time is read once the pass may decide: waiting for the writer (an import's transaction) or for another
  // node's pass can take seconds, and the jobs it finds were submitted during that wait.
  const now = clock();
  const due = await tx.jobs.dueScheduled(now, PROMOTIONS_PER_PASS);
  for (const j of due) {
    if ((await submitNextOccurrence(kernel, tx, j, now, effects)) === 'skip') {
      move(j, 'Skipped', now).runEnd = now;
    } else await kernel.settle(tx, j, now, effects);
  }
  await tx.jobs.updateMany(due);

  const gates = new Gates(kernel, tx, now, effects);
  if (sweepOverdue) await gates.sweepOverdue();
  const state = await loadDispatchState(tx, ctx, now, gates, effects.wakeAt);
  const urgent = runNow.size === 0 ? [] : (await tx.jobs.getMany([...runNow])).filter((j) => j.status === 'Queued');
  // Counting the jobs that hold slots reads every one of them (B11: with many running jobs this blocked the event loop
  // at every pass as they ended); most passes, e.g. after a job ended, find nothing Queued, so they skip it.
  const waiting = urgent.length > 0 || (await tx.jobs.hasQueued());
  const active = waiting ? await tx.jobs.countActive(OCCUPYING) : [];
  const lanes = waiting ? candidateLanes(state, active) : [];
  const { eligible, capped } = await eligibleCandidates(tx, gates, lanes, urgent);
  const byId = new Map(eligible.map((j) => [j.jobId, j]));
  const plan = planDispatch(state, active, eligible.map(candidateOf));
  const changed = gates.changed;
  const chains: JobRecord[] = [];
  const asking: JobRecord[] = [];
  const credentials = new CredentialResolver(tx, ctx.secrets);
  for (const a of plan) {
    const job = byId.get(a.jobId);
    if (!job) throw new Error(`Job:${a.jobId} was planned but is not a candidate`);
    const credential = a.processServer === SYSTEM_SERVER ? null : (job.data.spec.credential ?? null);
    const found = credential ? await credentials.lookup(credential, job.partition) : undefined;
    if (found && !found.ok) {
      // It never starts: no lock or event taken; a recurrence it belongs to goes on.
      delete job.data.runNow;
      await submitNextOccurrence(kernel, tx, job, now, effects);
      await kernel.finish(tx, job, { status: 'Error', notes: [found.note] }, now, effects);
      changed.delete(job.jobId);
      continue;
    }
    gates.take(job);
    // Never before it was asked for, unless asked to run now: on PostgreSQL a submit that read the clock after this
    // pass did can commit before the pass reads the queue (each statement sees what committed before it).
    const at = job.data.runNow === true ? now : Math.max(now, job.requestedStart);
    job.processServer = a.processServer;
    job.scheduledStart = at;
    job.modificationTime = at;
    delete job.data.runNow;
    delete job.data.windowClosesAt;
    await submitNextOccurrence(kernel, tx, job, now, effects); // started early (runnow, release): its successor is due now too
    await takeEvents(kernel, tx, job, now, effects);
    if (a.processServer === SYSTEM_SERVER) {
      move(job, 'Running', at).runStart = at;
      wakeAtLimit(job, effects);
      if (job.data.spec.type === 'JobChain') chains.push(job);
      else if (asks(job)) asking.push(job);
      else {
        if (ctx.node !== undefined) job.data.runNode = ctx.node;
        effects.startSystem.push(job);
      }
    } else {
      move(job, 'Dispatched', at).attempt += 1;
      const instance = ctx.agentInstance?.(a.processServer);
      if (instance !== undefined) job.data.agentInstance = instance;
      else delete job.data.agentInstance;
      const message = runMessage(job, found?.ok ? found.credential : undefined);
      effects.messages.push({
        processServer: a.processServer,
        message,
        ...(instance !== undefined ? { instance } : {}),
      });
    }
    changed.set(job.jobId, job);
  }
  gates.settleContenders();
  await tx.jobs.updateMany([...changed.values()]);
  for (const chain of chains) await startChain(kernel, tx, chain, now, effects);
  for (const job of asking) await startAsking(kernel, tx, job, now, effects);
  const more = due.length === PROMOTIONS_PER_PASS || (capped && plan.length > 0);
  return { more, started: plan.map((a) => a.jobId) };
}

/**
 * The queued jobs this pass may plan, in dispatch order: the `runnow` ones first, then each lane read in dispatch
 * order up to its room (plus a little), further while its window or lock keeps jobs back, at most
 * CANDIDATES_PER_PASS a lane. The gates see the jobs in dispatch order across lanes, so that the first of several
 * jobs wanting one lock gets it; only a lane read a second time sees its further jobs after the others' first.
 * `capped`: a lane was read that far, so another pass may find more.
 */
async function eligibleCandidates(
  tx: Store,
  gates: Gates,
  lanes: readonly Lane[],
  urgent: readonly JobRecord[],
): Promise<{ eligible: JobRecord[]; capped: boolean }> {
  const seen = new Set<number>();
  const eligible: JobRecord[] = [];
  const admit = async (jobs: readonly JobRecord[]) => {
    for (const j of jobs) {
      if (seen.has(j.jobId)) continue;
      seen.add(j.jobId);
      if (await gates.pass(j)) eligible.push(j);
    }
  };
  await admit(urgent);
  let open = lanes.map((lane) => ({ lane, read: 0, passed: 0, done: false }));
  let capped = false;
  while (open.length > 0) {
    // Every open lane's next page in one read (one statement on PostgreSQL, under the dispatch lock).
    const asked = open.map((at) => ({
      at,
      want: Math.min(at.lane.room - at.passed + LANE_SLACK, CANDIDATES_PER_PASS - at.read),
    }));
    const read = await tx.jobs.dispatchCandidates(
      asked.map(({ at, want }) => ({
        queue: at.lane.queue,
        definitionType: at.lane.definitionType,
        limit: want,
        offset: at.read,
      })),
    );
    const pages = asked.map(({ at, want }, i) => {
      const jobs = read[i] ?? [];
      at.read += jobs.length;
      at.done = jobs.length < want;
      if (!at.done && at.read >= CANDIDATES_PER_PASS) [at.done, capped] = [true, true];
      return { at, jobs };
    });
    const page = pages
      .flatMap(({ at, jobs }) => jobs.map((job) => ({ at, job })))
      .sort((a, b) => inOrder(a.job, b.job));
    for (const { at, job } of page) {
      const before = eligible.length;
      await admit([job]);
      at.passed += eligible.length - before;
    }
    open = open.filter((at) => !at.done && at.passed < at.lane.room);
  }
  return { eligible, capped };
}

/** A queued job as the planner sees it. */
export const candidateOf = (j: JobRecord): Candidate => ({
  jobId: j.jobId,
  queue: j.queue,
  priority: j.priority,
  definitionType: j.data.spec.type,
  runNow: j.data.runNow === true,
});

/** Dispatch order (docs/architecture.md §8), as the index jobs_dispatch gives it within a lane. */
const inOrder = (a: JobRecord, b: JobRecord): number =>
  b.priority - a.priority || a.topStart - b.topStart || a.requestedStart - b.requestedStart || a.jobId - b.jobId;
