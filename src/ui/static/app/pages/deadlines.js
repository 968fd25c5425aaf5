/**
 * The Deadlines page: today's deadlines (`GET {base}/deadlines`) with the state of each one's run (on time, at
 * risk, missed, met), its estimated end and the alerts it raised. Read again when the feed tells of an alert or of a
 * job of a watched definition, and every half minute (estimates move with the clock).
 */
import { api } from '../api.js';
import { zoneOfWire } from '../dates.js';
import { fill, h } from '../dom.js';
import { onFeed } from '../feed.js';
import { shortTime, statusClass, text } from '../format.js';

/**
 * One deadline today, as `GET /deadlines` answers it.
 * @typedef {{
 *   Deadline: string, Description: string | null, JobDefinition: string, EndBy: string, LeadMinutes: number,
 *   Applies: boolean, State: string, Job: number | null, JobStatus: string | null, EstimatedEnd: string | null,
 *   Alerts: string[]
 * }} DeadlineToday
 */

/** @typedef {{ type: string, data: Record<string, unknown> }} FeedEvent */

/** How often the page reads the deadlines again on its own. */
const REFRESH_MS = 30_000;

/** The badge class and words of each state. */
const STATES = /** @type {Record<string, [string, string]>} */ ({
  OnTime: ['st-ok', 'On time'],
  AtRisk: ['st-wait', 'At risk'],
  Missed: ['st-bad', 'Missed'],
  Met: ['st-ok', 'Met'],
  Ended: ['st-quiet', 'Ended'],
  NoRun: ['st-pending', 'No run yet'],
  NotToday: ['st-quiet', 'Not today'],
});

/**
 * A date of the interface, short, with its zone: deadlines of several zones sit side by side.
 * @param {string | null} v
 * @returns {string}
 */
const zoned = (v) => (v === null ? '—' : `${shortTime(v)} ${zoneOfWire(v)}`);

/**
 * @param {HTMLElement} main
 * @returns {() => void} what stops the page's timer and feed subscription
 */
export function renderDeadlines(main) {
  const info = h('p', { class: 'muted', id: 'deadlines-info', role: 'status' }, 'Loading the deadlines…');
  const table = h('div', { id: 'deadlines-table' });
  fill(main, h('h1', {}, 'Deadlines'), info, table);
  /** @type {Set<string>} */
  let watched = new Set();
  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let soon;

  /**
   * Reads today's deadlines and shows them.
   * @returns {Promise<void>}
   */
  async function load() {
    try {
      const res = /** @type {{ Time: string, Deadlines: DeadlineToday[] }} */ (await api('GET', '/deadlines'));
      if (stopped) return;
      watched = new Set(res.Deadlines.map((d) => d.JobDefinition));
      info.textContent = summary(res.Deadlines, res.Time);
      fill(table, res.Deadlines.length ? deadlineTable(res.Deadlines) : null);
    } catch (err) {
      if (!stopped) info.textContent = err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * A burst of events reads the deadlines once.
   * @returns {void}
   */
  function later() {
    clearTimeout(soon);
    soon = setTimeout(() => void load(), 500);
  }

  const unsubscribe = onFeed(
    /** @param {FeedEvent[]} batch */ (batch) => {
      if (batch.some((ev) => concerns(ev, watched))) later();
    },
  );
  const timer = setInterval(() => void load(), REFRESH_MS);
  void load();
  return () => {
    stopped = true;
    clearTimeout(soon);
    clearInterval(timer);
    unsubscribe();
  };
}

/**
 * Whether a feed event may change what the page shows: a deadline's alert, or a job of a watched definition.
 * @param {FeedEvent} ev
 * @param {Set<string>} watched
 * @returns {boolean}
 */
function concerns(ev, watched) {
  if (ev.type === 'alert') return String(ev.data.source ?? '').startsWith('Deadline:');
  return ev.type === 'job' && watched.has(String(ev.data.definition));
}

/**
 * The line above the table.
 * @param {DeadlineToday[]} deadlines
 * @param {string} time
 * @returns {string}
 */
function summary(deadlines, time) {
  if (deadlines.length === 0)
    return 'No deadlines (or none you may view). A Deadline object names a definition and its EndBy.';
  const count = (/** @type {string} */ state) => deadlines.filter((d) => d.State === state).length;
  const risky = count('AtRisk') + count('Missed');
  return `${deadlines.length} ${deadlines.length === 1 ? 'deadline' : 'deadlines'} today, as of ${zoned(time)}: ${
    risky === 0 ? 'none at risk' : `${count('AtRisk')} at risk, ${count('Missed')} missed`
  }.`;
}

/**
 * @param {DeadlineToday[]} deadlines
 * @returns {HTMLElement}
 */
function deadlineTable(deadlines) {
  return h(
    'table',
    { class: 'list', id: 'deadlines' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Deadline', 'Definition', 'End by', 'State', 'Run', 'Estimated end', 'Alerts'].map((c) => h('th', {}, c)),
      ),
    ),
    h('tbody', {}, deadlines.map(deadlineRow)),
  );
}

/**
 * @param {DeadlineToday} d
 * @returns {HTMLElement}
 */
function deadlineRow(d) {
  const [cls, words] = STATES[d.State] ?? ['st-pending', d.State];
  return h(
    'tr',
    { 'data-deadline': d.Deadline, 'data-state': d.State },
    h('td', { title: d.Deadline }, d.Description ?? d.Deadline),
    h('td', {}, h('a', { href: `#/definition/${encodeURIComponent(d.JobDefinition)}` }, d.JobDefinition)),
    h('td', { title: `${d.EndBy}, lead ${d.LeadMinutes} min` }, zoned(d.EndBy)),
    h('td', {}, h('span', { class: `status ${cls}` }, words)),
    h(
      'td',
      {},
      d.Job === null
        ? '—'
        : [
            h('a', { href: `#/job/${d.Job}` }, `Job ${d.Job}`),
            ' ',
            h('span', { class: statusClass(d.JobStatus ?? '') }, text(d.JobStatus)),
          ],
    ),
    h('td', { title: text(d.EstimatedEnd) }, zoned(d.EstimatedEnd)),
    h('td', {}, d.Alerts.length ? d.Alerts.join(', ') : '—'),
  );
}
