import type { FinishedMessage, KnownAttempt, LostMessage, StartedMessage } from '../agent/protocol.ts';
import { itemAt } from '../domain/item-at.ts';
import type { JobFileRecord, JobRecord } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import { applyOutText } from '../domain/parameters.ts';
import { parseReturnCodeMap } from '../domain/return-codes.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import { isSafeFileName } from './job-files.ts';
import { type Effects, type Kernel, move } from './kernel.ts';
import { wakeAtLimit } from './max-run-time.ts';

/**
 * What the server does with an agent's messages, inside a transaction. A report is applied only when it is for
 * the job's current attempt on that process server and the job is not final yet; every `finished` and `lost` is
 * acknowledged all the same, so the agent can drop it (at-least-once reporting, de-duplicated here).
 */

const ON_AGENT: readonly JobStatus[] = ['Dispatched', 'Assigned', 'Running', 'Killing'];

const isCurrent = (job: JobRecord | undefined, processServer: string, attempt: number): job is JobRecord =>
  job !== undefined && job.processServer === processServer && job.attempt === attempt && !isFinal(job.status);

const STANDARD_FILES: ReadonlyArray<Pick<JobFileRecord, 'name' | 'fileOrder' | 'type'>> = [
  { name: 'stdout.log', fileOrder: 1, type: 'Output' },
  { name: 'stderr.log', fileOrder: 2, type: 'Log' },
];

async function markRunning(tx: Store, job: JobRecord, startTime: number, now: number, effects: Effects): Promise<void> {
  move(job, 'Running', now).runStart = startTime;
  wakeAtLimit(job, effects);
  // The standard files' rows, unless an earlier attempt wrote them: no read of the job's files first (a statement less
  // a job); the ids of rows left out go unused.
  const ids = await tx.nextUniqueIds(STANDARD_FILES.length);
  await tx.jobs.insertFiles(
    STANDARD_FILES.map((f, i) => ({ ...f, uniqueId: itemAt(ids, i), jobId: job.jobId, format: 'text/plain', size: 0 })),
    { ifAbsent: true },
  );
}

/**
 * Reconciles the agent's spool with the jobs this process server holds, right after it (re)connects. The attempts
 * it knows become its instance's (a restarted agent takes over its spool). Of those it does not know, one that was
 * dispatched to this instance never started (its spool is written before the spawn) and is queued again; one of
 * another instance — gone, since one instance serves a process server at a time (docs/architecture.md §16) — may have started there,
 * and ends Unknown like a running one: nothing runs twice.
 */
export async function applyHello(
  kernel: Kernel,
  tx: Store,
  agent: { processServer: string; instance: string },
  known: readonly KnownAttempt[],
  now: number,
  effects: Effects,
): Promise<void> {
  const { processServer, instance } = agent;
  const byJob = new Map(known.map((k) => [k.jobId, k]));
  const jobs = await tx.jobs.listByStatus(ON_AGENT, { processServer, limit: 100_000 });
  const changed: JobRecord[] = [];
  for (const job of jobs) {
    const a = byJob.get(job.jobId);
    byJob.delete(job.jobId);
    const other = job.data.agentInstance !== undefined && job.data.agentInstance !== instance;
    if (a && a.attempt === job.attempt) {
      if (other) {
        job.data.agentInstance = instance;
        changed.push(job);
      }
      if (job.status === 'Dispatched' || job.status === 'Assigned') {
        await markRunning(tx, job, a.startTime ?? now, now, effects);
        if (!other) changed.push(job);
      } else if (job.status === 'Killing') {
        effects.messages.push({ processServer, message: { type: 'kill', jobId: job.jobId, attempt: job.attempt } });
      }
      continue;
    }
    if (!other && (job.status === 'Dispatched' || job.status === 'Assigned')) {
      // The agent writes its spool before it spawns: an attempt it does not know never started. Queue it again.
      move(job, 'Queued', now).processServer = null;
      delete job.data.agentInstance;
      changed.push(job);
      effects.dispatch = true;
    } else if (!(job.status === 'Running' && job.data.scriptEnded)) {
      const note = other
        ? `Its agent (instance ${job.data.agentInstance}) is gone; instance ${instance} serves ${processServer} now`
        : `Agent of ${processServer} no longer knows attempt ${job.attempt}`;
      await kernel.finish(tx, job, { status: 'Unknown', notes: [note] }, now, effects);
    }
  }
  await tx.jobs.updateMany(changed);
  // Attempts the agent still runs for jobs that moved on (set Unknown, or another attempt): let them go.
  for (const a of byJob.values())
    if (a.state === 'running')
      effects.messages.push({ processServer, message: { type: 'abandon', jobId: a.jobId, attempt: a.attempt } });
}

export async function applyStarted(
  tx: Store,
  processServer: string,
  m: StartedMessage,
  now: number,
  effects: Effects,
): Promise<void> {
  const job = await tx.jobs.get(m.jobId);
  if (!isCurrent(job, processServer, m.attempt) || (job.status !== 'Dispatched' && job.status !== 'Assigned')) return;
  await markRunning(tx, job, m.startTime, now, effects);
  await tx.jobs.updateMany([job]);
}

/** Records the files the agent reported: sizes of the known ones, new rows for files from $MILLRACE_FILES. */
async function recordFiles(tx: Store, job: JobRecord, files: FinishedMessage['files']): Promise<void> {
  const existing = await tx.jobs.listFiles(job.jobId);
  const updates: JobFileRecord[] = [];
  const added: Array<Omit<JobFileRecord, 'uniqueId'>> = [];
  let order = Math.max(2, ...existing.map((f) => f.fileOrder));
  for (const f of files) {
    if (!isSafeFileName(f.name) || !Number.isSafeInteger(f.size) || f.size < 0) continue;
    const row = existing.find((e) => e.name === f.name);
    if (row) {
      if (row.size !== f.size) updates.push({ ...row, size: f.size });
      continue;
    }
    const standard = STANDARD_FILES.find((s) => s.name === f.name);
    added.push({
      jobId: job.jobId,
      name: f.name,
      fileOrder: standard?.fileOrder ?? ++order,
      type: standard?.type ?? 'Output',
      format: 'application/octet-stream',
      size: f.size,
    });
  }
  await tx.jobs.updateFiles(updates);
  const ids = await tx.nextUniqueIds(added.length);
  await tx.jobs.insertFiles(added.map((f, i) => ({ ...f, uniqueId: itemAt(ids, i) })));
}

function outcomeOf(job: JobRecord, m: FinishedMessage): { status: JobStatus; note?: string } {
  if (m.error) return { status: 'Error', note: `Could not run: ${m.error}` };
  if (m.returnCode === null) {
    if (m.killed || job.status === 'Killing') return { status: 'Killed', note: `Killed (${m.signal ?? 'signal'})` };
    return { status: 'Error', note: `Ended by signal ${m.signal ?? 'unknown'}` };
  }
  if (job.status === 'Killing') return { status: 'Killed' };
  const completes = parseReturnCodeMap(job.data.spec.returnCodeMap);
  return { status: completes(m.returnCode) ? 'Completed' : 'Error' };
}

export async function applyFinished(
  kernel: Kernel,
  tx: Store,
  processServer: string,
  m: FinishedMessage,
  now: number,
  effects: Effects,
): Promise<void> {
  effects.messages.push({ processServer, message: { type: 'ack', jobId: m.jobId, attempt: m.attempt } });
  const job = await tx.jobs.get(m.jobId);
  if (!isCurrent(job, processServer, m.attempt) || job.data.scriptEnded) return;
  if (job.runStart === null) job.runStart = m.startTime;
  await recordFiles(tx, job, Array.isArray(m.files) ? m.files : []);
  const notes = applyOutText(job.data.parameters, m.out ?? {}, job.data.zone);
  const { status, note } = outcomeOf(job, m);
  if (note) notes.push(note);
  if (job.data.spec.completionStrategy === 'External' && status !== 'Killed' && !m.error) {
    // Stays Running until updateJob sets its final status.
    job.returnCode = m.returnCode;
    job.data.scriptEnded = true;
    job.data.notes.push(...notes, `Script ended with return code ${m.returnCode ?? m.signal}; waiting for updateJob`);
    job.modificationTime = now;
    await tx.jobs.updateMany([job]);
    return;
  }
  await kernel.finish(tx, job, { status, runEnd: m.endTime, returnCode: m.returnCode, notes }, now, effects);
}

export async function applyLost(
  kernel: Kernel,
  tx: Store,
  processServer: string,
  m: LostMessage,
  now: number,
  effects: Effects,
): Promise<void> {
  effects.messages.push({ processServer, message: { type: 'ack', jobId: m.jobId, attempt: m.attempt } });
  const job = await tx.jobs.get(m.jobId);
  if (!isCurrent(job, processServer, m.attempt)) return;
  await kernel.finish(
    tx,
    job,
    { status: 'Unknown', notes: ['The agent restarted while the job ran; its outcome is unknown'] },
    now,
    effects,
  );
}

/**
 * Attempts dispatched to an agent instance that no longer serves their process server while another one does (the
 * `run` went to a session dropped in that moment, after its successor's hello): Unknown, if still so.
 */
export async function applyOrphans(
  kernel: Kernel,
  tx: Store,
  orphans: ReadonlyArray<{ jobId: number; attempt: number; instance: string }>,
  now: number,
  effects: Effects,
): Promise<number> {
  let n = 0;
  for (const o of orphans) {
    const job = await tx.jobs.get(o.jobId);
    if (!job || job.attempt !== o.attempt || job.data.agentInstance !== o.instance) continue;
    if (job.status !== 'Dispatched' && job.status !== 'Assigned') continue;
    const note = `Dispatched to agent instance ${o.instance}, which no longer serves ${job.processServer}`;
    await kernel.finish(tx, job, { status: 'Unknown', notes: [note] }, now, effects);
    n += 1;
  }
  return n;
}

/** The agent has been away longer than its timeout: every job it held becomes Unknown. */
export async function applyAgentLost(
  kernel: Kernel,
  tx: Store,
  processServer: string,
  now: number,
  effects: Effects,
): Promise<number> {
  const jobs = await tx.jobs.listByStatus(ON_AGENT, { processServer, limit: 100_000 });
  const held = jobs.filter((j) => !j.data.scriptEnded);
  for (const job of held)
    await kernel.finish(
      tx,
      job,
      { status: 'Unknown', notes: [`Agent of process server ${processServer} lost`] },
      now,
      effects,
    );
  return held.length;
}
