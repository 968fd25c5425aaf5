/**
 * The job monitor: `GET {base}/Job` with the filters in the address, newest first, paged by the server's cursor
 * (so page 500 costs what page 1 does), status cells updated live from batched feed events. Why the page's
 * waiting jobs wait is asked in one batch (`GET {base}/waiting?Jobs=…`): the hover of their status, and a badge on
 * a job no process server can run.
 */
import { api, ApiError, withQuery } from '../api.js';
import { fill, h } from '../dom.js';
import { feedOpen, jobIdOf, onFeed, statusOf } from '../feed.js';
import { STATUS_PRESETS, shortTime, statusClass, text } from '../format.js';
import { navigate } from '../router.js';
import { BATCH, reasonText, WAITING_STATUSES } from '../waiting.js';

const FIELDS = 'jobId,JobDefinition,Description,Status,Queue,ProcessServer,CreationTime,RunStart,RunEnd,ReturnCode';
const FILTERS = ['Search', 'Status', 'JobDefinition', 'Queue', 'ProcessServer', 'Since', 'Until'];
const PAGE = 50;
const MAX_PAGE = 1000;

export function renderJobs(main, _params, query) {
  const filters = Object.fromEntries(FILTERS.map((f) => [f, query[f] ?? '']));
  const limit = Math.min(MAX_PAGE, Math.max(1, Number.parseInt(query.Limit ?? '', 10) || PAGE));
  const cursors = [];
  let after = query.After ?? '';
  let next = null;
  const rows = new Map();
  let refreshTimer = null;
  let reasonsTimer = null;
  let reasonsAsked = 0;

  const input = (name, placeholder) =>
    h('input', { name, id: `f-${name}`, placeholder, value: filters[name], 'aria-label': name });
  const status = h(
    'select',
    { name: 'Status', id: 'f-Status', 'aria-label': 'Status' },
    STATUS_PRESETS.map(([v, label]) => h('option', { value: v }, label)),
  );
  if (filters.Status && !STATUS_PRESETS.some(([v]) => v === filters.Status))
    status.appendChild(h('option', { value: filters.Status }, filters.Status));
  status.value = filters.Status;
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
    const q = {};
    for (const f of FILTERS) {
      const el = form.elements.namedItem(f);
      if (el?.value.trim()) q[f] = el.value.trim();
    }
    if (query.Limit) q.Limit = query.Limit;
    navigate('/jobs', q);
  });

  const body = h('tbody', { id: 'jobs-body' });
  const table = h(
    'table',
    { class: 'jobs', id: 'jobs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
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
          'RC',
        ].map((c) => h('th', {}, c)),
      ),
    ),
    body,
  );
  const info = h('p', { class: 'muted', id: 'jobs-info' });
  const newer = h(
    'button',
    { type: 'button', id: 'newer', onclick: () => page(cursors.pop() ?? '', false) },
    '← Newer',
  );
  const older = h('button', { type: 'button', id: 'older', onclick: () => page(next, true) }, 'Older →');
  fill(main, h('h1', {}, 'Jobs'), form, table, h('div', { class: 'pager' }, newer, older, info));

  function row(job) {
    const st = h('span', { class: statusClass(job.Status) }, job.Status);
    const mark = h('span', { class: 'mark' });
    const tr = h(
      'tr',
      { 'data-job': job.jobId },
      h('td', {}, h('a', { href: `#/job/${job.jobId}` }, String(job.jobId))),
      h('td', {}, text(job.JobDefinition)),
      h('td', { class: 'desc' }, text(job.Description)),
      h('td', {}, st, mark),
      h('td', {}, text(job.Queue)),
      h('td', {}, text(job.ProcessServer)),
      h('td', { class: 'time', title: job.CreationTime ?? '' }, shortTime(job.CreationTime)),
      h('td', { class: 'time', title: job.RunStart ?? '' }, shortTime(job.RunStart)),
      h('td', { class: 'time', title: job.RunEnd ?? '' }, shortTime(job.RunEnd)),
      h('td', {}, text(job.ReturnCode)),
    );
    rows.set(job.jobId, { tr, st, mark, status: job.Status });
    return tr;
  }

  function showReasons(r, reasons) {
    if (!r) return;
    if (reasons.length) r.st.title = reasons.map(reasonText).join('\n');
    else r.st.removeAttribute('title');
    const stuck = reasons.find((x) => x.Code === 'NoProcessServer');
    fill(r.mark, stuck ? [' ', h('span', { class: 'badge stuck', title: stuck.Message }, 'No process server')] : null);
  }

  /** One request per page of the list (the server takes up to BATCH ids), not one per row. */
  async function loadReasons() {
    const mine = ++reasonsAsked;
    const ids = [...rows].filter(([, r]) => WAITING_STATUSES.has(r.status)).map(([id]) => id);
    for (let i = 0; i < ids.length; i += BATCH) {
      let res;
      try {
        res = await api('GET', withQuery('/waiting', { Jobs: ids.slice(i, i + BATCH).join(',') }));
      } catch {
        return; // the list stays useful without its reasons
      }
      if (mine !== reasonsAsked) return;
      for (const item of res.items ?? []) showReasons(rows.get(item.Job), item.Reasons ?? []);
    }
  }

  function reasonsSoon() {
    if (reasonsTimer) return;
    reasonsTimer = setTimeout(() => {
      reasonsTimer = null;
      void loadReasons();
    }, 1000);
  }

  async function page(cursor, forward) {
    if (forward && cursor !== null) cursors.push(after);
    after = cursor ?? '';
    try {
      const res = await api('GET', withQuery('/Job', { ...filters, Limit: limit, After: after, fields: FIELDS }));
      rows.clear();
      fill(body, res.items.map(row));
      next = res.next;
      older.disabled = !next;
      newer.disabled = after === '';
      info.textContent = res.items.length === 0 ? 'No jobs match.' : `${res.items.length} jobs on this page`;
      void loadReasons();
    } catch (err) {
      fill(body);
      info.textContent = err instanceof ApiError ? err.message : String(err);
    }
  }

  /** On the first page, new jobs matter: reload it at most once a second. */
  function refreshSoon() {
    if (after !== '' || refreshTimer) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      void page('', false);
    }, 1000);
  }

  const unsubscribe = onFeed((batch, resync) => {
    if (resync) return refreshSoon();
    let unseen = false;
    let waited = false;
    for (const ev of batch) {
      const id = jobIdOf(ev);
      if (id === null) continue;
      const r = rows.get(id);
      const to = statusOf(ev);
      if (r && to) {
        r.st.textContent = to;
        r.st.className = statusClass(to);
        r.status = to;
        showReasons(r, []);
        if (WAITING_STATUSES.has(to)) waited = true;
      } else if (!r) unseen = true;
    }
    if (unseen) refreshSoon();
    if (waited) reasonsSoon();
  });
  // Without the feed (reconnecting), the first page is re-read every 5 seconds instead.
  const poll = setInterval(() => {
    if (!feedOpen() && after === '') void page('', false);
  }, 5000);
  void page(after, false);
  return () => {
    unsubscribe();
    clearInterval(poll);
    clearTimeout(refreshTimer);
    clearTimeout(reasonsTimer);
  };
}
