/**
 * Job detail: its fields, In and Out parameters, history, files with the live log, the chain's steps, and the
 * actions that apply now. The job is re-read when the feed names it (or every 2 s while it is not final and the
 * feed is away), without reloading the page.
 */
import { api, ApiError, jsonBase } from '../api.js';
import { fill, h, notice } from '../dom.js';
import { feedOpen, jobIdOf, onFeed } from '../feed.js';
import { paramValue, statusClass, text } from '../format.js';
import { chainView } from '../chain-view.js';
import { actionButtons } from '../job-actions.js';
import { followFile } from '../log-follower.js';
import { parameterForm } from '../param-form.js';
import { navigate } from '../router.js';
import { isFinal } from '../session.js';
import { reasonList, WAITING_STATUSES } from '../waiting.js';

const INFO = [
  ['Description', 'Description'],
  ['Definition', 'JobDefinition'],
  ['Queue', 'Queue'],
  ['Process server', 'ProcessServer'],
  ['Priority', 'Priority'],
  ['Return code', 'ReturnCode'],
  ['Submitted by', 'SubmittedBy'],
  ['Created', 'CreationTime'],
  ['Requested start', 'RequestedStartTime'],
  ['Scheduled start', 'ScheduledStartTime'],
  ['Run start', 'RunStart'],
  ['Run end', 'RunEnd'],
  ['Job group', 'JobGroup'],
];

export async function renderJob(main, { id }) {
  let job;
  try {
    job = await api('GET', `/Job/${encodeURIComponent(id)}`);
  } catch (err) {
    fill(main, h('h1', {}, `Job ${id}`), h('p', { class: 'error' }, err.message));
    return;
  }
  const jobId = job.jobId;
  const title = h('h1', {}, `Job ${jobId} `, h('span', { class: 'muted' }, text(job.JobDefinition)), ' ');
  const status = h('span', { id: 'job-status' });
  const actions = h('div');
  const info = h('dl', { class: 'info', id: 'job-info' });
  const params = h('tbody', { id: 'job-params' });
  const notes = h('ul', { class: 'notes' });
  const waiting = h('div');
  const reasons = h('section', { id: 'job-waiting', hidden: true });
  let reasonsAsked = 0;
  const history = h('tbody', { id: 'job-history' });
  const historyNote = h('p', { class: 'muted small' });
  const files = h('div', { class: 'files', id: 'job-files' });
  const resubmitArea = h('div');
  const chain = chainView(jobId);
  const followers = new Map();
  let pollTimer = null;
  let stopped = false;

  function render() {
    fill(status, h('span', { class: statusClass(job.Status) }, job.Status));
    fill(actions, actionButtons(job, { changed: () => void reload(), resubmit: openResubmit }));
    fill(
      info,
      INFO.map(([label, key]) => [
        h('dt', {}, label),
        h(
          'dd',
          {},
          key === 'JobDefinition' && job[key]
            ? h('a', { href: `#/definition/${encodeURIComponent(job[key])}` }, job[key])
            : text(job[key]),
        ),
      ]),
      job.ParentJob
        ? [h('dt', {}, 'Parent job'), h('dd', {}, h('a', { href: `#/job/${job.ParentJob}` }, String(job.ParentJob)))]
        : null,
    );
    fill(
      params,
      (job.JobParameters ?? []).map((p) =>
        h(
          'tr',
          {},
          h('td', {}, p.Name),
          h('td', {}, p.Direction),
          h('td', { class: 'value' }, text(paramValue(p, 'In'))),
          h('td', { class: 'value' }, text(paramValue(p, 'Out'))),
        ),
      ),
    );
    if (!job.JobParameters?.length)
      fill(params, h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'This job has no parameters.')));
    fill(
      notes,
      (job.JobNotes ?? []).map((n) => h('li', {}, n)),
    );
    fill(
      waiting,
      job.UserMessage || job.OperatorMessage
        ? h(
            'p',
            { class: 'notice info' },
            'This job waits for a reply. ',
            h('a', { href: '#/inbox' }, 'Answer it in the inbox'),
          )
        : null,
    );
    void loadReasons();
    if (!job.JobFiles?.length && !files.children.length) fill(files, h('p', { class: 'muted' }, 'No files.'));
    else if (job.JobFiles?.length && files.firstElementChild?.tagName === 'P' && followers.size === 0) fill(files);
    for (const f of job.JobFiles ?? []) {
      if (followers.has(f.uniqueId)) continue;
      const isLog = /\.(log|txt|out|err)$/.test(f.Name);
      if (isLog) {
        const follower = followFile(f, () => isFinal(job.Status));
        followers.set(f.uniqueId, follower);
        files.append(follower.element);
      } else {
        followers.set(f.uniqueId, null);
        files.append(
          h(
            'p',
            {},
            h('a', { href: `${jsonBase()}/JobFile/${f.uniqueId}/content`, target: '_blank', rel: 'noopener' }, f.Name),
            ` ${f.Size ?? ''} bytes`,
          ),
        );
      }
    }
  }

  /** Why a job that has not started waits, in the server's words; nothing for a job past that. */
  async function loadReasons() {
    const mine = ++reasonsAsked;
    let answer = null;
    if (WAITING_STATUSES.has(job.Status)) {
      try {
        answer = await api('GET', `/Job/${jobId}/waiting`);
      } catch {
        answer = null; // a server without the endpoint, or the job just removed: the page shows no reasons
      }
    }
    if (mine !== reasonsAsked) return;
    const list = answer?.Reasons ?? [];
    reasons.hidden = list.length === 0;
    fill(reasons, list.length ? [h('h2', {}, 'Why it waits'), reasonList(list)] : null);
  }

  async function loadHistory() {
    try {
      const res = await api('GET', `/Job/${jobId}/history`);
      const items = res.items ?? [];
      fill(
        history,
        items.map((e) =>
          h(
            'tr',
            {},
            h('td', { class: 'time' }, text(e.Time)),
            h('td', {}, e.FromStatus ? h('span', { class: statusClass(e.FromStatus) }, e.FromStatus) : '—'),
            h('td', {}, h('span', { class: statusClass(e.ToStatus) }, e.ToStatus)),
            h('td', {}, e.User ? `${e.Cause} by ${e.User}` : text(e.Cause)),
            h('td', { class: 'desc' }, text(e.Detail)),
          ),
        ),
      );
      historyNote.textContent = items.length ? '' : 'No status changes recorded.';
    } catch (err) {
      historyNote.textContent =
        err instanceof ApiError && (err.status === 404 || err.status === 405)
          ? 'History is not available.'
          : err.message;
    }
  }

  let reloading = false;
  let again = false;
  async function reload() {
    if (reloading) {
      again = true;
      return;
    }
    reloading = true;
    clearTimeout(pollTimer);
    pollTimer = null;
    try {
      job = await api('GET', `/Job/${jobId}`);
      render();
      for (const f of followers.values()) f?.poke();
      void loadHistory();
      chain.refresh();
    } catch (err) {
      notice(err.message, 'error');
    }
    reloading = false;
    if (again && !stopped) {
      again = false;
      void reload();
    } else schedulePoll();
  }

  function schedulePoll() {
    if (stopped || pollTimer) return;
    pollTimer = setTimeout(() => {
      pollTimer = null;
      if (!feedOpen() && !isFinal(job.Status)) void reload();
      else schedulePoll();
    }, 2000);
  }

  function openResubmit() {
    const definition = job.JobDefinition;
    const values = Object.fromEntries(
      (job.JobParameters ?? []).filter((p) => p.Direction !== 'Out').map((p) => [p.Name, paramValue(p, 'In') ?? '']),
    );
    const params = (job.JobParameters ?? []).map((p) => ({
      Name: p.Name,
      Direction: p.Direction,
      DataType: p.DataType,
      Optional: true,
    }));
    fill(
      resubmitArea,
      h('h2', {}, `Resubmit ${definition}`),
      parameterForm({
        params,
        values,
        submitLabel: 'Resubmit',
        onSubmit: async (body) => {
          const created = await api('PUT', `/Job/${jobId}`, body);
          navigate(`/job/${created.jobId}`);
        },
      }),
    );
    resubmitArea.scrollIntoView();
  }

  const unsubscribe = onFeed((batch, resync) => {
    if (resync || batch.some((ev) => jobIdOf(ev) === jobId)) void reload();
  });

  fill(
    main,
    title,
    status,
    actions,
    waiting,
    reasons,
    h(
      'div',
      { class: 'cols' },
      h('section', {}, h('h2', {}, 'Job'), info, notes),
      h(
        'section',
        {},
        h('h2', {}, 'Parameters'),
        h(
          'table',
          { class: 'params' },
          h(
            'thead',
            {},
            h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Direction'), h('th', {}, 'In'), h('th', {}, 'Out')),
          ),
          params,
        ),
      ),
    ),
    resubmitArea,
    chain.element,
    h('section', {}, h('h2', {}, 'Output'), files),
    h(
      'section',
      {},
      h('h2', {}, 'History'),
      h(
        'table',
        { class: 'history' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Time'),
            h('th', {}, 'From'),
            h('th', {}, 'To'),
            h('th', {}, 'Cause'),
            h('th', {}, 'Detail'),
          ),
        ),
        history,
      ),
      historyNote,
    ),
  );
  render();
  void loadHistory();
  schedulePoll();
  return () => {
    stopped = true;
    unsubscribe();
    clearTimeout(pollTimer);
    chain.stop();
    for (const f of followers.values()) f?.stop();
  };
}
