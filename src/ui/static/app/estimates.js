/**
 * Estimated ends (`GET {base}/Job/<id>/estimate`, docs/architecture.md §8b): a running job's progress against its
 * estimate as a thin bar with its estimated end, in the job list and on a job's page, and the critical path of
 * what is left of a chain job marked on its steps and calls. Progress moves on in the browser between answers by
 * the time since the answer came, so a browser whose clock is off shows it right.
 */
import { api } from './api.js';
import { parseWireDate } from './dates.js';
import { h } from './dom.js';
import { shortTime } from './format.js';

/**
 * @typedef {object} Estimate
 * @property {string | null} EstimatedStart
 * @property {string | null} EstimatedEnd
 * @property {'P50' | 'P95' | 'None'} Basis
 * @property {number | null} Progress
 * @property {Array<{Step: string, StepJob: number | null, Call: number | null, Job: number | null,
 *   JobDefinition: string | null, EstimatedEnd: string}>} [CriticalPath]
 */

/** Statuses of a job that has started and not ended: the ones whose progress is shown. */
export const RUNNING_STATUSES = new Set([
  'PreRunning',
  'Running',
  'PostRunning',
  'Waiting',
  'Console',
  'Killing',
  'Canceling',
]);

/** At most this many estimates asked for one page of the job list. */
const MAX_ASKED = 50;

/**
 * A job's estimate; undefined when it cannot be had (the list and the page stay useful without it).
 * @param {number} jobId
 * @returns {Promise<Estimate | undefined>}
 */
export async function estimateOf(jobId) {
  try {
    /** @type {Estimate} */
    const e = await api('GET', `/Job/${jobId}/estimate`);
    answeredAt.set(e, Date.now());
    return e;
  } catch {
    return undefined;
  }
}

/** When each estimate was answered (browser clock), to move its progress on without asking again. */
/** @type {WeakMap<Estimate, number>} */
const answeredAt = new WeakMap();

/**
 * Progress now, 0…1: the answer's, moved on by the time since it came over the estimated duration; null without
 * an estimate.
 * @param {Estimate} e
 * @returns {number | null}
 */
export function progressNow(e) {
  if (e.Progress === null || e.Progress >= 1) return e.Progress;
  const start = parseWireDate(e.EstimatedStart);
  const end = parseWireDate(e.EstimatedEnd);
  const at = answeredAt.get(e);
  if (start === null || end === null || at === undefined) return e.Progress;
  return Math.min(1, e.Progress + (Date.now() - at) / Math.max(1, end - start));
}

/**
 * A thin bar of a running job's progress and its estimated end, e.g. `▮▮▮▯ ends 11/26 06:10:00`.
 * @param {Estimate} e
 * @returns {HTMLElement}
 */
export function progressBar(e) {
  const p = progressNow(e) ?? 0;
  const bar = /** @type {HTMLProgressElement} */ (
    h('progress', {
      class: 'run-progress',
      max: '100',
      'aria-label': `Progress against the estimate (${e.Basis})`,
      title: `${Math.round(p * 100)} % of the ${e.Basis} estimate`,
    })
  );
  bar.value = Math.round(p * 100);
  const over = p >= 1 && e.Basis !== 'None';
  return h(
    'span',
    { class: over ? 'estimate late' : 'estimate' },
    bar,
    ' ',
    h(
      'span',
      { class: 'time', title: e.EstimatedEnd ?? '' },
      over ? 'past estimate' : `ends ${shortTime(e.EstimatedEnd)}`,
    ),
  );
}

/**
 * The job list's estimate column: a cell per row, filled for the running jobs of the page with one request each
 * (at most 50 a page), and moved on every 5 seconds without asking again.
 * @returns {{cell: (job: {jobId: number, Status: string}) => HTMLElement, status: (jobId: number, status: string) => void,
 *   clear: () => void, load: () => Promise<void>, stop: () => void}}
 */
export function estimateColumn() {
  /** @type {Map<number, {td: HTMLElement, status: string, estimate?: Estimate}>} */
  const cells = new Map();
  let asked = 0;
  const show = (/** @type {{td: HTMLElement, estimate?: Estimate}} */ c) => {
    c.td.replaceChildren();
    if (c.estimate && c.estimate.Basis !== 'None') c.td.append(progressBar(c.estimate));
  };
  const timer = setInterval(() => {
    for (const c of cells.values()) if (c.estimate && RUNNING_STATUSES.has(c.status)) show(c);
  }, 5000);
  return {
    cell(job) {
      const td = h('td', { class: 'estimate-cell', 'data-estimate-of': job.jobId });
      cells.set(job.jobId, { td, status: job.Status });
      return td;
    },
    status(jobId, status) {
      const c = cells.get(jobId);
      if (!c) return;
      c.status = status;
      if (!RUNNING_STATUSES.has(status)) {
        c.estimate = undefined;
        show(c);
      }
    },
    clear() {
      cells.clear();
    },
    async load() {
      const mine = ++asked;
      const running = [...cells].filter(([, c]) => RUNNING_STATUSES.has(c.status)).slice(0, MAX_ASKED);
      const answers = await Promise.all(running.map(([id]) => estimateOf(id)));
      if (mine !== asked) return;
      running.forEach(([, c], i) => {
        c.estimate = answers[i];
        show(c);
      });
    },
    stop() {
      clearInterval(timer);
      cells.clear();
    },
  };
}

/**
 * Marks the critical path of what is left of a chain job on its steps and calls (elements `[data-status-of]` of the
 * chain view): each step left names its call expected to end last, and when.
 * @param {HTMLElement} chainList
 * @param {Estimate | undefined} e
 */
export function markCriticalPath(chainList, e) {
  for (const old of chainList.querySelectorAll('.critical')) old.remove();
  for (const step of e?.CriticalPath ?? []) {
    if (step.Job === null) continue;
    const badge = chainList.querySelector(`[data-status-of="${step.Job}"]`);
    badge?.after(
      h(
        'span',
        {
          class: 'critical',
          'data-critical-of': step.Job,
          title: `Critical path: step ${step.Step} ends ${step.EstimatedEnd}`,
        },
        ` critical path · ends ${shortTime(step.EstimatedEnd)}`,
      ),
    );
  }
}

/**
 * Fills a job page's estimate line: a running job's progress bar and estimated end, a waiting job's expected start
 * and end; nothing for a finished job or one no statistics tell about.
 * @param {HTMLElement} el
 * @param {{jobId: number, Status: string}} job
 * @param {(status: string) => boolean} isFinal
 * @returns {Promise<void>}
 */
export async function estimateLine(el, job, isFinal) {
  if (isFinal(job.Status)) {
    el.replaceChildren();
    return;
  }
  const e = await estimateOf(job.jobId);
  el.replaceChildren();
  if (!e || e.Basis === 'None') return;
  if (RUNNING_STATUSES.has(job.Status)) el.append('Estimated end (', e.Basis, '): ', progressBar(e));
  else
    el.append(
      `Expected to start ${shortTime(e.EstimatedStart)} and end ${shortTime(e.EstimatedEnd)} (${e.Basis} of its runs)`,
    );
}
