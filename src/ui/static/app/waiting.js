/**
 * Why a job waits (`GET {base}/Job/<id>/waiting`, and `GET {base}/waiting?Jobs=…` for a page of the job list): the
 * server's reasons in plain words, the object each names linked where the dashboard has a page for it.
 */
import { h } from './dom.js';

/** Statuses in which a job has not started and may be held back by something (the job list asks only for these). */
export const WAITING_STATUSES = new Set([
  'New',
  'Scheduled',
  'Queued',
  'QueueHeld',
  'Held',
  'EventWait',
  'LockWait',
  'Overdue',
  'Chained',
  'Delayed',
]);

/** The server takes at most this many ids in one batch. */
export const BATCH = 200;

/** Where the dashboard shows an object named `Type:key`, if anywhere. */
export function objectHref(object) {
  if (typeof object !== 'string') return null;
  const at = object.indexOf(':');
  if (at < 0) return null;
  const type = object.slice(0, at);
  const key = encodeURIComponent(object.slice(at + 1));
  if (type === 'Job') return `#/job/${key}`;
  if (type === 'JobDefinition') return `#/definition/${key}`;
  if (type === 'TimeWindow') return `#/timewindow/${key}`;
  if (type === 'Queue' || type === 'ProcessServer') return '#/infra';
  return null;
}

/** One reason as a line of text (the job list's hover). */
export const reasonText = (r) => (r.Until ? `${r.Message} (until ${r.Until})` : r.Message);

/** The reasons as a list for the job's page. */
export function reasonList(reasons) {
  return h(
    'ul',
    { class: 'reasons', id: 'job-waiting-reasons' },
    reasons.map((r) => {
      const href = objectHref(r.Object);
      return h(
        'li',
        { 'data-code': r.Code },
        r.Message,
        r.Object ? [' ', href ? h('a', { href }, r.Object) : h('span', { class: 'muted' }, r.Object)] : null,
        r.Until ? h('span', { class: 'muted' }, ` until ${r.Until}`) : null,
      );
    }),
  );
}

/** Whether the reasons say no process server can run the job (the job list marks it). */
export const noProcessServer = (reasons) => (reasons ?? []).some((r) => r.Code === 'NoProcessServer');
