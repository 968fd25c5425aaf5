/**
 * The job monitor: `GET {base}/Job` with the filters in the address, newest first, paged by the server's cursor
 * (so page 500 costs what page 1 does), status cells updated live from batched feed events. Why the page's
 * waiting jobs wait is asked in one batch (`GET {base}/waiting?Jobs=…`): the hover of their status, and a badge on
 * a job no process server can run.
 */
import { api, ApiError, withQuery } from '../api.js';
import { fieldValue, fill, h } from '../dom.js';
import { feedOpen, jobIdOf, onFeed, statusOf } from '../feed.js';
import { STATUS_PRESETS, shortTime, statusClass, text } from '../format.js';
import { navigate } from '../router.js';
import { BATCH, reasonText, WAITING_STATUSES } from '../waiting.js';
import { estimateColumn, RUNNING_STATUSES } from '../estimates.js';
import { bulkSelection } from '../bulk-select.js';
/** @import { FeedEvent, Job, Page, WaitingItem, WaitReason } from '../api-types.js' */

const FIELDS = 'jobId,JobDefinition,Description,Status,Queue,ProcessServer,CreationTime,RunStart,RunEnd,ReturnCode';
const FILTERS = ['Search', 'Status', 'JobDefinition', 'Queue', 'ProcessServer', 'Since', 'Until'];
const PAGE = 50;
const MAX_PAGE = 1000;

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} _params
 * @param {Record<string, string>} query
 */
export function renderJobs(main, _params, query) {
  const list = jobList(query);
  const form = filterForm(list.filters, query);
  fill(
    main,
    h('h1', {}, 'Jobs'),
    form,
    list.selection.bar,
    jobsTable(list.body, list.selection.head()),
    h('div', { class: 'pager' }, list.newer, list.older, list.info),
  );
  const unsubscribe = onFeed((batch, resync) => onFeedBatch(list, batch, resync));
  // Without the feed (reconnecting), the first page is re-read every 5 seconds instead.
  const poll = setInterval(() => {
    if (!feedOpen() && list.after === '') void page(list, '', false);
  }, 5000);
  void page(list, list.after, false);
  return () => {
    unsubscribe();
    clearInterval(poll);
    clearTimeout(list.refreshTimer);
    clearTimeout(list.reasonsTimer);
    list.estimates.stop();
  };
}

/**
 * A row shown: its status cell, the mark beside it (a job no process server can run), and the status shown.
 * @typedef {{ tr: HTMLTableRowElement, st: HTMLSpanElement, mark: HTMLSpanElement, status: string }} JobRow
 */
/**
 * The list's state: the filters and cursor of the page shown, its rows by job id, and the timers of the coming
 * refresh and reasons request. Module-level functions take it instead of sharing a closure.
 * @typedef {object} JobList
 * @property {Record<string, string>} filters
 * @property {number} limit
 * @property {string[]} cursors  the cursors of the pages before the one shown (for "Newer")
 * @property {string} after  the cursor of the page shown ('' for the first)
 * @property {string | null | undefined} next  the cursor of the next page, if any
 * @property {Map<number, JobRow>} rows
 * @property {ReturnType<typeof estimateColumn>} estimates  the estimated-end column
 * @property {ReturnType<typeof bulkSelection>} selection  the jobs picked for a bulk action
 * @property {ReturnType<typeof setTimeout> | undefined} refreshTimer
 * @property {ReturnType<typeof setTimeout> | undefined} reasonsTimer
 * @property {number} reasonsAsked  the reasons request last made (an older answer is dropped)
 * @property {HTMLTableSectionElement} body
 * @property {HTMLParagraphElement} info
 * @property {HTMLButtonElement} newer
 * @property {HTMLButtonElement} older
 */

/**
 * @param {Record<string, string>} query
 * @returns {JobList}
 */
function jobList(query) {
  /** @type {JobList} */
  const list = {
    filters: Object.fromEntries(FILTERS.map((f) => [f, query[f] ?? ''])),
    limit: Math.min(MAX_PAGE, Math.max(1, Number.parseInt(query.Limit ?? '', 10) || PAGE)),
    cursors: [],
    after: query.After ?? '',
    next: null,
    rows: new Map(),
    refreshTimer: undefined,
    reasonsTimer: undefined,
    reasonsAsked: 0,
    body: h('tbody', { id: 'jobs-body' }),
    estimates: estimateColumn(),
    selection: bulkSelection(() => void page(list, list.after, false)),
    info: h('p', { class: 'muted', id: 'jobs-info' }),
    newer: h(
      'button',
      { type: 'button', id: 'newer', onclick: () => page(list, list.cursors.pop() ?? '', false) },
      '← Newer',
    ),
    older: h('button', { type: 'button', id: 'older', onclick: () => page(list, list.next, true) }, 'Older →'),
  };
  return list;
}

/**
 * The filter form; submitting it goes to the list with the filters in the address.
 * @param {Record<string, string>} filters
 * @param {Record<string, string>} query
 */
function filterForm(filters, query) {
  /**
   * @param {string} name
   * @param {string} placeholder
   */
  const input = (name, placeholder) =>
    h('input', { name, id: `f-${name}`, placeholder, value: filters[name], 'aria-label': name });
  const status = h(
    'select',
    { name: 'Status', id: 'f-Status', 'aria-label': 'Status' },
    STATUS_PRESETS.map(([v, label]) => h('option', { value: v }, label)),
  );
  if (filters.Status && !STATUS_PRESETS.some(([v]) => v === filters.Status))
    status.appendChild(h('option', { value: filters.Status }, filters.Status));
  status.value = filters.Status ?? '';
  const form = h(
    'form',
    { class: 'filters', id: 'job-filters' },
    input('Search', 'Search name or description'),
    status,
    input('JobDefinition', 'Definition'),
    input('Queue', 'Queue'),
    input('ProcessServer', 'Process server'),
    input('Since', 'Created since (2026-11-23T08:00Z)'),
    h('button', { type: 'submit' }, 'Filter'),
    h('button', { type: 'button', class: 'link', onclick: () => navigate('/jobs') }, 'Clear'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    /** @type {Record<string, string>} */
    const q = {};
    for (const f of FILTERS) {
      const v = fieldValue(form, f);
      if (v) q[f] = v;
    }
    if (query.Limit) q.Limit = query.Limit;
    navigate('/jobs', q);
  });
  return form;
}

/**
 * @param {HTMLTableSectionElement} body
 * @param {HTMLTableCellElement} pickAll  the header cell selecting every job of the page
 */
function jobsTable(body, pickAll) {
  return h(
    'table',
    { class: 'jobs', id: 'jobs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        pickAll,
        [
          'Job',
          'Definition',
          'Description',
          'Status',
          'Queue',
          'Process server',
          'Created',
          'Started',
          'Ended',
          'Estimated end',
          'RC',
        ].map((c) => h('th', {}, c)),
      ),
    ),
    body,
  );
}

/**
 * One job's row; its status cell and mark are kept in `rows` so feed events update them in place.
 * @param {Map<number, JobRow>} rows
 * @param {Job} job
 * @param {ReturnType<typeof estimateColumn>} estimates
 * @param {HTMLTableCellElement} pick  its checkbox for bulk actions
 */
function row(rows, job, estimates, pick) {
  const st = h('span', { class: statusClass(job.Status) }, job.Status);
  const mark = h('span', { class: 'mark' });
  const tr = h(
    'tr',
    { 'data-job': job.jobId },
    pick,
    h('td', {}, h('a', { href: `#/job/${job.jobId}` }, String(job.jobId))),
    h('td', {}, text(job.JobDefinition)),
    h('td', { class: 'desc' }, text(job.Description)),
    h('td', {}, st, mark),
    h('td', {}, text(job.Queue)),
    h('td', {}, text(job.ProcessServer)),
    h('td', { class: 'time', title: job.CreationTime ?? '' }, shortTime(job.CreationTime)),
    h('td', { class: 'time', title: job.RunStart ?? '' }, shortTime(job.RunStart)),
    h('td', { class: 'time', title: job.RunEnd ?? '' }, shortTime(job.RunEnd)),
    estimates.cell(job),
    h('td', {}, text(job.ReturnCode)),
  );
  rows.set(job.jobId, { tr, st, mark, status: job.Status });
  return tr;
}

/**
 * @param {JobRow | undefined} r
 * @param {WaitReason[]} reasons
 */
function showReasons(r, reasons) {
  if (!r) return;
  if (reasons.length) r.st.title = reasons.map(reasonText).join('\n');
  else r.st.removeAttribute('title');
  const stuck = reasons.find((x) => x.Code === 'NoProcessServer');
  fill(r.mark, stuck ? [' ', h('span', { class: 'badge stuck', title: stuck.Message }, 'No process server')] : null);
}

/**
 * One request per page of the list (the server takes up to BATCH ids), not one per row.
 * @param {JobList} list
 */
async function loadReasons(list) {
  const mine = ++list.reasonsAsked;
  const ids = [...list.rows].filter(([, r]) => WAITING_STATUSES.has(r.status)).map(([id]) => id);
  for (let i = 0; i < ids.length; i += BATCH) {
    /** @type {Page<WaitingItem>} */
    let res;
    try {
      res = await api('GET', withQuery('/waiting', { Jobs: ids.slice(i, i + BATCH).join(',') }));
    } catch {
      return; // the list stays useful without its reasons
    }
    if (mine !== list.reasonsAsked) return;
    for (const item of res.items ?? []) showReasons(list.rows.get(item.Job), item.Reasons ?? []);
  }
}

/** @param {JobList} list */
function reasonsSoon(list) {
  if (list.reasonsTimer) return;
  list.reasonsTimer = setTimeout(() => {
    list.reasonsTimer = undefined;
    void loadReasons(list);
  }, 1000);
}

/**
 * Shows the page after `cursor`; `forward` when it is the next one (the one shown is remembered for "Newer").
 * @param {JobList} list
 * @param {string | null | undefined} cursor
 * @param {boolean} forward
 */
async function page(list, cursor, forward) {
  if (forward && cursor !== null) list.cursors.push(list.after);
  // A selection is of the page it was made on.
  if ((cursor ?? '') !== list.after) list.selection.clear();
  list.after = cursor ?? '';
  try {
    /** @type {Page<Job>} */
    const res = await api(
      'GET',
      withQuery('/Job', { ...list.filters, Limit: list.limit, After: list.after, fields: FIELDS }),
    );
    list.rows.clear();
    list.estimates.clear();
    list.selection.redraw();
    fill(
      list.body,
      res.items.map((job) => row(list.rows, job, list.estimates, list.selection.cell(job))),
    );
    list.next = res.next;
    list.older.disabled = !list.next;
    list.newer.disabled = list.after === '';
    list.info.textContent = res.items.length === 0 ? 'No jobs match.' : `${res.items.length} jobs on this page`;
    void loadReasons(list);
    void list.estimates.load();
  } catch (err) {
    fill(list.body);
    list.info.textContent = err instanceof ApiError ? err.message : String(err);
  }
}

/**
 * On the first page, new jobs matter: reload it at most once a second.
 * @param {JobList} list
 */
function refreshSoon(list) {
  if (list.after !== '' || list.refreshTimer) return;
  list.refreshTimer = setTimeout(() => {
    list.refreshTimer = undefined;
    void page(list, '', false);
  }, 1000);
}

/**
 * A status change of a shown job updates its cell in place; a job not shown brings a refresh of the first page.
 * @param {JobList} list
 * @param {FeedEvent[]} batch
 * @param {boolean} resync
 */
function onFeedBatch(list, batch, resync) {
  if (resync) return refreshSoon(list);
  let unseen = false;
  let waited = false;
  let started = false;
  for (const ev of batch) {
    const id = jobIdOf(ev);
    if (id === null) continue;
    const r = list.rows.get(id);
    const to = statusOf(ev);
    if (r && to) {
      r.st.textContent = to;
      r.st.className = statusClass(to);
      r.status = to;
      list.estimates.status(id, to);
      showReasons(r, []);
      if (WAITING_STATUSES.has(to)) waited = true;
      if (RUNNING_STATUSES.has(to)) started = true;
    } else if (!r) unseen = true;
  }
  if (unseen) refreshSoon(list);
  if (waited) reasonsSoon(list);
  if (started) void list.estimates.load();
}
