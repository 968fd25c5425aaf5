import {
  type AlertSourceDefaults,
  delayMs,
  type JobAlertStatus,
  jobSourceEntry,
  serverSourceMatches,
} from '../domain/alert-match.ts';
import { itemAt } from '../domain/item-at.ts';
import type { JobRecord } from '../domain/job.ts';
import { substitute } from '../domain/substitute.ts';
import { isOpen } from '../domain/time-window.ts';
import { fieldDefault } from '../model/data.ts';
import type { AlertWorkItem } from '../store/alert-work-store.ts';
import { allObjects, listAllObjects } from '../store/all-objects.ts';
import type { StatusChange } from '../store/job-store.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Answer, Kernel } from './kernel.ts';
import { insertOperatorMessage } from './operator-message.ts';
import { loadWindow } from './windows.ts';

/**
 * Alerts: alert sources say when one is raised, escalations say who receives it, how long to wait
 * for an acknowledgement and where to go next. An alert is an Alert object plus the operator message it sends;
 * its deliveries and its escalation are alert work rows (store/alert-work-store.ts), carried out by the
 * AlertWorker after the commit, so a crash neither loses nor half-sends one.
 */

/** The reply that acknowledges an alert: what alert sources accept by default. */
export const DEFAULT_ALERT_REPLY = fieldDefault('ProcessServerAlertSource', 'ReplyExpression');
/** What the alert sources' declarations give a field left empty. */
export const SOURCE_DEFAULTS: AlertSourceDefaults = {
  NamePattern: fieldDefault('ProcessServerAlertSource', 'NamePattern'),
  PartitionPattern: fieldDefault('JobDefinitionAlertSource', 'PartitionPattern'),
  DelayAmount: fieldDefault('JobDefinitionAlertSource', 'Statuses', 'DelayAmount'),
  DelayUnits: fieldDefault('JobDefinitionAlertSource', 'Statuses', 'DelayUnits'),
};
const OPEN_STATUSES = new Set(['NotAcknowledged', 'Escalated']);

const DEFAULT_JOB_TEXT = 'Job:${jobid} (${jobdefinition}) went from ${oldStatus} to ${newStatus}';

/** What the engine keeps between transactions: the enabled job alert sources, read once until one changes. */
export class AlertSources {
  private jobSources: StoredObject<'JobDefinitionAlertSource'>[] | undefined;

  invalidate(): void {
    this.jobSources = undefined;
  }

  async forJobs(tx: Store): Promise<StoredObject<'JobDefinitionAlertSource'>[]> {
    this.jobSources ??= (await listAllObjects(tx, 'JobDefinitionAlertSource')).filter((s) => s.data.Enabled !== false);
    return this.jobSources;
  }
}

/** A transaction's job status changes, seen just before it commits: raise alerts now or check back after a delay. */
export async function onJobStatusChanges(
  tx: Store,
  sources: AlertSources,
  changes: StatusChange[],
  now: number,
): Promise<boolean> {
  const all = await sources.forJobs(tx);
  if (all.length === 0) return false;
  let planned = false;
  const later: Array<Omit<AlertWorkItem, 'attempts' | 'state' | 'lastError'>> = [];
  for (const { job, from, to, entry: change } of changes)
    for (const source of all) {
      const entry = jobSourceEntry(source.data, job, to, SOURCE_DEFAULTS, change.cause);
      if (!entry) continue;
      const delay = delayMs(entry, SOURCE_DEFAULTS);
      planned = true;
      if (delay === 0) await raiseJobAlert(tx, source, entry, job, from, change.cause, now);
      else
        later.push({
          id: 0,
          kind: 'check',
          dueAt: now + delay,
          alertId: null,
          data: { jobId: job.jobId, status: to, from, source: source.key, cause: change.cause },
        });
    }
  if (later.length > 0) {
    const ids = await tx.nextUniqueIds(later.length);
    await tx.alertWork.add(later.map((w, i) => ({ ...w, id: itemAt(ids, i) })));
  }
  return planned;
}

/** A delayed check came due: the alert is raised only if the job is still in the status, and the source still on. */
export async function runCheck(tx: Store, item: AlertWorkItem, now: number): Promise<void> {
  const d = item.data as { jobId: number; status: string; from: string | null; source: string; cause?: string };
  const job = await tx.jobs.get(d.jobId);
  const source = await tx.getObject('JobDefinitionAlertSource', d.source);
  if (!job || !source || job.status !== d.status) return;
  const entry = jobSourceEntry(source.data, job, d.status, SOURCE_DEFAULTS, d.cause);
  if (entry) await raiseJobAlert(tx, source, entry, job, d.from, d.cause ?? '', now);
}

function raiseJobAlert(
  tx: Store,
  source: StoredObject<'JobDefinitionAlertSource'>,
  entry: JobAlertStatus,
  job: JobRecord,
  from: string | null,
  cause: string,
  now: number,
) {
  const vars = {
    jobid: String(job.jobId),
    jobdefinition: job.definition,
    jobdescription: job.description ?? job.definition,
    partition: job.partition,
    queue: job.queue,
    returncode: job.returnCode === null ? '' : String(job.returnCode),
    oldStatus: from ?? '',
    newStatus: entry.Status,
    cause,
    alertSource: source.key,
  };
  return raiseAlert(
    tx,
    {
      source,
      sourceObject: `Job:${job.jobId}`,
      text: substitute(entry.Message ?? DEFAULT_JOB_TEXT, vars),
      replyExpression: DEFAULT_ALERT_REPLY,
      vars,
      zone: job.data.zone,
      address: null,
    },
    now,
  );
}

/** A process server's Status changed: alerts for every enabled ProcessServerAlertSource watching it. */
export async function onServerStatus(
  tx: Store,
  server: StoredObject,
  from: string | null,
  to: string,
  now: number,
): Promise<void> {
  for await (const source of allObjects(tx, 'ProcessServerAlertSource')) {
    if (!serverSourceMatches(source.data, server.key, to, SOURCE_DEFAULTS)) continue;
    const windowKey = source.data.TimeWindow;
    const zone = source.data.TimeZone ?? 'UTC';
    if (windowKey) {
      const window = await loadWindow(tx, windowKey, zone);
      if (
        window &&
        isOpen(window, now) !==
          ((source.data.TimeWindowStatus ?? fieldDefault('ProcessServerAlertSource', 'TimeWindowStatus')) === 'Open')
      )
        continue;
    }
    const vars = { processServer: server.key, oldStatus: from ?? '', newStatus: to, alertSource: source.key };
    await raiseAlert(
      tx,
      {
        source,
        sourceObject: `ProcessServer:${server.key}`,
        text: substitute(
          source.data.OperatorMessageExpression ??
            fieldDefault('ProcessServerAlertSource', 'OperatorMessageExpression'),
          vars,
        ),
        replyExpression: source.data.ReplyExpression ?? fieldDefault('ProcessServerAlertSource', 'ReplyExpression'),
        vars,
        zone,
        address: source.data.Address ?? null,
      },
      now,
    );
  }
}

/** An alert source, or the object a computed alert comes from (a Deadline, which names its escalation itself). */
type AlertOrigin = StoredObject<'JobDefinitionAlertSource' | 'ProcessServerAlertSource'> | StoredObject<'Deadline'>;

export interface NewAlert {
  source: AlertOrigin;
  sourceObject: string;
  text: string;
  replyExpression: string;
  vars: Record<string, string>;
  zone: string;
  /** The source's own Address (an e-mail address), sent to besides the escalation. */
  address: string | null;
  /** The escalation the source names outright (a Deadline's AlertEscalation), instead of its expression and default. */
  escalation?: string | null;
}

/** Stores an alert and its operator message, and plans its deliveries and its escalation. */
export async function raiseAlert(tx: Store, a: NewAlert, now: number): Promise<number> {
  const escalation =
    a.escalation === undefined && a.source.type !== 'Deadline'
      ? await chooseEscalation(tx, a.source, a.vars)
      : a.escalation === null || a.escalation === undefined
        ? undefined
        : await tx.getObject('AlertEscalation', a.escalation);
  const ids = await tx.nextUniqueIds(2);
  const alertId = itemAt(ids, 0);
  const messageId = itemAt(ids, 1);
  await insertOperatorMessage(
    tx,
    {
      partition: a.source.partition,
      sender: `Alert:${alertId}`,
      text: a.text,
      replyExpression: a.replyExpression,
      zone: a.zone,
    },
    now,
    messageId,
  );
  const at = (ms: number) => ({ ms, zone: a.zone });
  const escalatesAt = escalationDue(escalation, now);
  await tx.insertObject(
    {
      uniqueId: alertId,
      type: 'Alert',
      key: String(alertId),
      partition: a.source.partition,
      data: {
        AlertSource: `${a.source.type}:${a.source.key}`,
        AlertEscalation: escalation?.key ?? null,
        Status: 'NotAcknowledged',
        Message: a.text,
        SourceObject: a.sourceObject,
        ReplyExpression: a.replyExpression,
        OperatorMessage: messageId,
        EscalationTime: escalatesAt === null ? null : at(escalatesAt),
        CreationTime: at(now),
        Reply: null,
        ReplyTime: null,
        ReplyUser: null,
      },
      protection: null,
      creationTime: now,
      modificationTime: now,
    },
    [],
  );
  const extra = a.address ? [{ Kind: 'Email', Address: a.address }] : [];
  await planDeliveries(tx, alertId, escalation, now, extra);
  return alertId;
}

/** The source's EscalationExpression, when it names an existing escalation, else its DefaultAlertEscalation. */
async function chooseEscalation(
  tx: Store,
  source: StoredObject<'JobDefinitionAlertSource' | 'ProcessServerAlertSource'>,
  vars: Record<string, string>,
): Promise<StoredObject<'AlertEscalation'> | undefined> {
  const expression = source.data.EscalationExpression;
  if (expression) {
    const name = substitute(expression, vars).trim();
    const found =
      (await tx.getObject('AlertEscalation', name.includes('.') ? name : `${source.partition}.${name}`)) ??
      (name.includes('.') ? undefined : await tx.getObject('AlertEscalation', `GLOBAL.${name}`));
    if (found) return found;
  }
  const fallback = source.data.DefaultAlertEscalation;
  return fallback ? tx.getObject('AlertEscalation', fallback) : undefined;
}

/** When an alert that reached `escalation` now moves on unless acknowledged; null when it stays there. */
function escalationDue(escalation: StoredObject<'AlertEscalation'> | undefined, now: number): number | null {
  const within = escalation?.data.AcknowledgeWithin ?? null;
  return within !== null && escalation?.data.EscalateTo ? now + within * 1000 : null;
}

/** One delivery row per recipient of `escalation` (and `extra`), and the escalation's own timer. */
async function planDeliveries(
  tx: Store,
  alertId: number,
  escalation: StoredObject<'AlertEscalation'> | undefined,
  now: number,
  extra: Array<{ Kind: string; Address: string }> = [],
): Promise<void> {
  const recipients = [...(escalation?.data.Recipients ?? []), ...extra];
  const escalatesAt = escalationDue(escalation, now);
  const work: Array<Omit<AlertWorkItem, 'attempts' | 'state' | 'lastError'>> = recipients.map((r) => ({
    id: 0,
    kind: 'deliver',
    dueAt: now,
    alertId,
    data: { kind: r.Kind, address: r.Address, escalation: escalation?.key ?? null },
  }));
  if (escalation && escalatesAt !== null)
    work.push({ id: 0, kind: 'escalate', dueAt: escalatesAt, alertId, data: { from: escalation.key } });
  if (work.length === 0) return;
  const ids = await tx.nextUniqueIds(work.length);
  await tx.alertWork.add(work.map((w, i) => ({ ...w, id: itemAt(ids, i) })));
}

/** Nobody acknowledged the alert in time: it moves to the next escalation, whose recipients hear of it. */
export async function runEscalation(tx: Store, item: AlertWorkItem, now: number): Promise<void> {
  const alert = await tx.getObject('Alert', String(item.alertId));
  if (!alert || !OPEN_STATUSES.has(String(alert.data.Status)) || alert.data.AlertEscalation !== item.data.from) return;
  const from = await tx.getObject('AlertEscalation', String(item.data.from));
  const nextKey = from?.data.EscalateTo;
  const next = nextKey ? await tx.getObject('AlertEscalation', nextKey) : undefined;
  if (!next) return;
  const zone = alert.data.CreationTime?.zone ?? 'UTC';
  const escalatesAt = escalationDue(next, now);
  await tx.patchObjectData(alert.uniqueId, {
    ...alert.data,
    Status: 'Escalated',
    AlertEscalation: next.key,
    EscalationTime: escalatesAt === null ? null : { ms: escalatesAt, zone },
  });
  await planDeliveries(tx, alert.uniqueId, next, now);
}

/**
 * A reply to an alert (or to its operator message): `Acknowledge` acknowledges it, another accepted reply marks it
 * Replied; either way it stops escalating. Returns false when the alert no longer waits for a reply.
 */
async function answerAlert(
  tx: Store,
  alert: StoredObject<'Alert'>,
  reply: string,
  user: string,
  now: number,
): Promise<boolean> {
  if (!OPEN_STATUSES.has(String(alert.data.Status))) return false;
  const zone = alert.data.CreationTime?.zone ?? 'UTC';
  await tx.patchObjectData(alert.uniqueId, {
    ...alert.data,
    Status: reply === DEFAULT_ALERT_REPLY ? 'Acknowledged' : 'Replied',
    Reply: reply,
    ReplyTime: { ms: now, zone },
    ReplyUser: user,
    EscalationTime: null,
  });
  for (const w of await tx.alertWork.ofAlert(alert.uniqueId, 'escalate'))
    await tx.alertWork.update({ ...w, state: 'canceled' });
  const messageId = alert.data.OperatorMessage ?? null;
  const message = messageId === null ? undefined : await tx.getObject('OperatorMessage', String(messageId));
  if (message && message.data.ReplyStatus === 'Required')
    await tx.patchObjectData(message.uniqueId, {
      ...message.data,
      ReplyStatus: 'Replied',
      Reply: reply,
      ReplyTime: { ms: now, zone },
      ReplyUser: user,
    });
  return true;
}

/** Reaction to a reply whose sender is an alert (its operator message, or the alert itself): see answerAlert. */
export async function answerAlertReply(_k: Kernel, tx: Store, a: Answer, now: number): Promise<boolean> {
  const sender = /^Alert:(\d+)$/.exec(a.sender);
  const alert = sender ? await tx.getObject('Alert', itemAt(sender, 1)) : undefined;
  return alert ? answerAlert(tx, alert, a.reply, a.user, now) : false;
}
