import { setImmediate as nextTurn } from 'node:timers/promises';
import { type BulkAnswer, bulkDetail, MAX_BULK_JOBS } from '../domain/bulk.ts';
import type { JobRecord } from '../domain/job.ts';
import {
  actionApplies,
  isJobAction,
  JOB_ACTIONS,
  type JobAction,
  jobAction,
  notApplicableMessage,
} from '../domain/job-actions.ts';
import type { Engine } from '../engine/engine.ts';
import { errorMessage, invalid, notFound } from '../errors.ts';
import { loopYielder } from '../loop-yield.ts';
import { requireForm } from '../model/registry.ts';
import { can, type Principal, partitionsWith } from '../security/privileges.ts';
import type { AuditActor } from '../store/audit-store.ts';
import type { Cause } from '../store/job-store.ts';
import type { Store } from '../store/store.ts';
import { type BulkRequest, parseBulkRequest } from './bulk-request.ts';
import { BulkProgress, type BulkRun } from './bulk-progress.ts';
import type { JobActions, ParsedBody } from './job-actions.ts';
import { partitionsToRead } from './list-query.ts';
import { userCause } from './user-cause.ts';

export interface BulkDeps {
  store: Store;
  engine: Engine;
  actions: JobActions;
  defaultTimeZone: string;
  /** Whether job actions are audited (the engine's `auditJobActions`) and the time an entry is written at. */
  auditing: { enabled: boolean; now: () => number };
}

/** Jobs acted on in one transaction of the serial loop; the event loop is let go between jobs all the same. */
const JOBS_PER_TRANSACTION = 200;
/** Jobs a Filter's match is read by at a time, the event loop let go between pages. */
const MATCH_PAGE = 500;

/** One request's work: who, what, on which jobs, and where its answer grows. */
interface Work {
  principal: Principal;
  action: JobAction;
  parsed: ParsedBody;
  ids: number[];
  /** The job history's cause (`bulk`); without the actor, so a slice writes no entry of its own. */
  cause: Cause;
  /** Who asked: each job acted on gets its own audit entry, as if acted on alone. */
  actor: AuditActor | undefined;
  run: BulkRun;
}

/**
 * Bulk actions (docs/architecture.md §6): `POST /Job/bulk/<action>` acts on the jobs a Filter of GET /Job matches
 * (the match fixed when the request starts) or on the JobIds given, each as if alone: its own privileges, its own
 * status check and the action's own code (`JobActions.actOn`, as `PUT /Job/<id>/<action>` runs it), its own history
 * entry (cause `bulk`, naming the user) and its own audit entry (action `bulk`, the detail naming the action and the
 * request; a job skipped gets none). Any action of the action table works so, with no list of its own here.
 * Jobs go in slices of one transaction each, the event loop let go between jobs; when a slice fails as a whole (an
 * action failing after it wrote), its jobs are done again one transaction each, so one job's failure is its own.
 */
export class BulkActions {
  private readonly deps: BulkDeps;
  readonly progress = new BulkProgress();

  constructor(deps: BulkDeps) {
    this.deps = deps;
  }

  /** The action named in the path; 400 for one the table does not have. */
  static action(name: string): JobAction {
    if (!isJobAction(name)) throw invalid(`Unknown action "${name}"; one of ${JOB_ACTIONS.join(', ')}`);
    return name;
  }

  /**
   * Runs a bulk request: the answer once every job is done, or (`Async`) a 202 at once with the request's id. The
   * body, the action's own body and the match are judged before anything is done (400 leaves everything as it was).
   */
  async start(
    principal: Principal,
    actionName: string,
    body: unknown,
  ): Promise<{ status: 200 | 202; answer: Record<string, unknown> }> {
    const action = BulkActions.action(actionName);
    const request = parseBulkRequest(body, this.deps.defaultTimeZone);
    const parsed = this.deps.actions.parseBody(action, actionBody(action, request.comment));
    const ids = request.jobIds ?? (await this.match(principal, request.filter ?? {}));
    const answer: BulkAnswer = { Matched: ids.length, Done: 0, Skipped: [], DryRun: request.dryRun };
    const run = this.progress.start(principal, action, answer);
    const { actor, ...cause } = userCause(principal, 'bulk', bulkDetail(action, run.RequestId, request.comment));
    const work: Work = { principal, action, parsed, ids, cause, actor, run };
    const finished = this.perform(work, request.dryRun).then(
      () => this.progress.finish(run),
      (e: unknown) => {
        this.progress.finish(run, errorMessage(e));
        if (!request.async) throw e;
      },
    );
    if (request.async) return { status: 202, answer: this.progress.read(principal, run.RequestId) };
    await finished;
    return { status: 200, answer: { ...answer } };
  }

  /** The ids of the jobs a Filter matches now (those the caller may view), newest first; 400 beyond the limit. */
  private async match(principal: Principal, filter: NonNullable<BulkRequest['filter']>): Promise<number[]> {
    const { partition, ...rest } = filter;
    const partitions = partitionsToRead(partitionsWith(principal, 'Job', ['View']), partition);
    const ids: number[] = [];
    for (let before: number | undefined; ; ) {
      const page = await this.deps.store.jobs.listJobs({
        ...rest,
        ...(partitions !== undefined ? { partitions } : {}),
        ...(before !== undefined ? { beforeJobId: before } : {}),
        limit: MATCH_PAGE,
      });
      for (const job of page) ids.push(job.jobId);
      if (ids.length > MAX_BULK_JOBS)
        throw invalid(
          `Field "Filter" matches more than ${MAX_BULK_JOBS.toLocaleString('en')} jobs; at most ${MAX_BULK_JOBS.toLocaleString('en')} jobs per request`,
        );
      const last = page[page.length - 1];
      if (page.length < MATCH_PAGE || !last) return ids;
      before = last.jobId;
      await nextTurn();
    }
  }

  private async perform(work: Work, dryRun: boolean): Promise<void> {
    if (dryRun) return this.judgeAll(work);
    for (let from = 0; from < work.ids.length; ) {
      if (!this.deps.engine.running) {
        for (const id of work.ids.slice(from)) skip(work, id, 'Not done: the server is stopping');
        return;
      }
      from = await this.slice(work, from);
      await nextTurn();
    }
  }

  /** A dry run: each job judged as the action would judge it (it exists, privileges, status); nothing changes. */
  private async judgeAll(work: Work): Promise<void> {
    const pause = loopYielder();
    for (const id of work.ids) {
      const reason = this.judge(work, id, await this.deps.store.jobs.get(id));
      if (reason === undefined) done(work);
      else skip(work, id, reason);
      await pause();
    }
  }

  /**
   * Acts on the jobs from `from` in one transaction, up to JOBS_PER_TRANSACTION; returns where the next slice
   * starts. The slice's results count only once it committed; when it fails, each of its jobs up to the one that
   * failed is done again alone.
   */
  private async slice(work: Work, from: number): Promise<number> {
    const to = Math.min(work.ids.length, from + JOBS_PER_TRANSACTION);
    let reached = from;
    const results: Array<string | undefined> = [];
    try {
      await this.deps.engine.mutate(async (tx, effects, kernel) => {
        results.length = 0;
        const pause = loopYielder();
        for (reached = from; reached < to; reached++) {
          results.push(
            await this.actOne(work, tx, reached, (id) =>
              this.deps.actions.actOn(tx, effects, kernel, work.principal, id, work.action, work.parsed, {}),
            ),
          );
          await pause();
        }
      }, work.cause);
    } catch {
      for (let i = from; i <= Math.min(reached, to - 1); i++) await this.alone(work, i);
      return Math.min(reached, to - 1) + 1;
    }
    for (const [i, reason] of results.entries()) record(work, work.ids[from + i] as number, reason);
    return to;
  }

  /** One job in a transaction of its own: whatever it fails with is its reason to be skipped. */
  private async alone(work: Work, index: number): Promise<void> {
    const id = work.ids[index] as number;
    try {
      const reason = await this.deps.engine.mutate(
        (tx, effects, kernel) =>
          this.actOne(work, tx, index, () =>
            this.deps.actions.actOn(tx, effects, kernel, work.principal, id, work.action, work.parsed, {}),
          ),
        work.cause,
      );
      record(work, id, reason);
    } catch (e) {
      record(work, id, errorMessage(e));
    }
  }

  /** Judges the job as it is in `tx` and acts on it when it may; answers the reason it was skipped, if it was. */
  private async actOne(
    work: Work,
    tx: Store,
    index: number,
    act: (id: number) => Promise<JobRecord>,
  ): Promise<string | undefined> {
    const id = work.ids[index] as number;
    const reason = this.judge(work, id, await tx.jobs.get(id));
    if (reason !== undefined) return reason;
    const job = await act(id);
    if (work.actor && this.deps.auditing.enabled)
      await tx.audit.add({
        time: this.deps.auditing.now(),
        actor: work.actor,
        action: work.cause.cause,
        object: { type: 'Job', key: String(job.jobId), uniqueId: job.uniqueId },
        detail: work.cause.detail,
        diff: null,
        restore: null,
      });
    return undefined;
  }

  /** Why the action would not be done on the job as it is now (the single action's own messages), if it would not. */
  private judge(work: Work, id: number, job: JobRecord | undefined): string | undefined {
    if (!job || !can(work.principal, 'Job', job.partition, 'View')) return notFound('Job', id).message;
    try {
      this.deps.actions.requirePrivileges(work.principal, job, work.action);
    } catch (e) {
      return errorMessage(e);
    }
    if (!actionApplies(work.action, job.status)) return notApplicableMessage(work.action, job.jobId, job.status);
    return undefined;
  }
}

/** The body each job's action gets: the Comment, when the action's own form takes one; else none. */
function actionBody(action: JobAction, comment: string | undefined): unknown {
  const form = requireForm('Job', jobAction(action).body);
  return comment !== undefined && form.byName.has('Comment') ? { Comment: comment } : undefined;
}

function record(work: Work, id: number, reason: string | undefined): void {
  if (reason === undefined) done(work);
  else skip(work, id, reason);
}

function done(work: Work): void {
  work.run.answer.Done += 1;
  work.run.Processed += 1;
}

function skip(work: Work, id: number, reason: string): void {
  work.run.answer.Skipped.push({ Job: id, Reason: reason });
  work.run.Processed += 1;
}
