/**
 * Why a job waits (`GET {base}/Job/<id>/waiting`, and `GET {base}/waiting?Jobs=…` for a page of the job list): the
 * server's reasons in plain words, the object each names linked where the dashboard has a page for it.
 */
import { h } from './dom.js';
/** @import { WaitReason } from './api-types.js' */

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

/**
 * Where the dashboard shows an object named `Type:key`, if anywhere.
 * @param {unknown} object
 * @returns {string | null}
 */
export function objectHref(object) {
  if (typeof object !== 'string') return null;
  const at = object.indexOf(':');
  if (at < 0) return null;
  const type = object.slice(0, at);
  const key = encodeURIComponent(object.slice(at + 1));
  if (type === 'Job') return `#/job/${key}`;
  if (type === 'JobDefinition') return `#/definition/${key}`;
  if (type === 'TimeWindow') return `#/timewindow/${key}`;
  if (type === 'EventDefinition') return `#/eventdefinition/${key}`;
  if (type === 'Queue' || type === 'ProcessServer' || type === 'QueueProvider') return '#/infra';
  return null;
}

/**
 * The end of a wait when the message does not already say it.
 * @param {WaitReason} r
 */
const untilNote = (r) => (r.Until && !r.Message.includes(r.Until) ? ` (until ${r.Until})` : '');

/**
 * One reason as a line of text (the job list's hover).
 * @param {WaitReason} r
 */
export const reasonText = (r) => `${r.Message}${untilNote(r)}`;

/**
 * A reason's message with the object it names as a link (where the dashboard has a page for it).
 * @param {WaitReason} r
 */
function reasonItem(r) {
  const object = r.Object;
  const href = objectHref(object);
  const link = object && href ? h('a', { href }, object) : null;
  const at = object && link ? r.Message.indexOf(object) : -1;
  const words =
    object && at >= 0
      ? [r.Message.slice(0, at), link, r.Message.slice(at + object.length)]
      : [r.Message, link ? [' (', link, ')'] : null];
  return h('li', { 'data-code': r.Code }, words, untilNote(r));
}

/**
 * The reasons as a list for the job's page.
 * @param {WaitReason[]} reasons
 */
export function reasonList(reasons) {
  return h('ul', { class: 'reasons', id: 'job-waiting-reasons' }, reasons.map(reasonItem));
}
