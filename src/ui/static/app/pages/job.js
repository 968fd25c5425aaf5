/**
 * Job detail: its fields, In and Out parameters, history, files with the live log, the chain's steps, and the
 * actions that apply now. The job is re-read when the feed names it (or every 2 s while it is not final and the
 * feed is away), without reloading the page.
 */
import { api, ApiError, jsonBase } from '../api.js';
import { fill, h, notice } from '../dom.js';
import { feedOpen, jobIdOf, onFeed } from '../feed.js';
import { errorText, paramValue, statusClass, text } from '../format.js';
import { chainView } from '../chain-view.js';
import { estimateLine, estimateOf, markCriticalPath } from '../estimates.js';
import { csvPreview } from '../csv-preview.js';
import { actionButtons } from '../job-actions.js';
import { jobEditForm } from '../job-edit.js';
import { followFile } from '../log-follower.js';
import { parameterForm } from '../param-form.js';
import { navigate } from '../router.js';
import { isFinal } from '../session.js';
import { reasonList, WAITING_STATUSES } from '../waiting.js';
/** @import { HistoryEntry, Job, Page, Waiting } from '../api-types.js' */
/** @import { ChainView } from '../chain-view.js' */
/** @import { FileFollower } from '../log-follower.js' */

/** @type {[string, keyof Job][]} */
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
/**
 * The page's state: the job as last read, the elements its sections fill, and the timers and followers to stop.
 * Module-level functions take it instead of sharing a closure.
 * @typedef {object} JobPage
 * @property {Job} job  as last read
 * @property {number} jobId
 * @property {HTMLSpanElement} status
 * @property {HTMLParagraphElement} estimate  the estimated end of a job not yet final (docs/architecture.md §8b)
 * @property {HTMLDivElement} actions
 * @property {HTMLDListElement} info
 * @property {HTMLTableSectionElement} params
 * @property {HTMLUListElement} notes
 * @property {HTMLDivElement} waiting  the note that the job waits for a reply
 * @property {HTMLElement} reasons  why it waits
 * @property {number} reasonsAsked  the reasons request last made (an older answer is dropped)
 * @property {HTMLTableSectionElement} history
 * @property {HTMLParagraphElement} historyNote
 * @property {HTMLDivElement} files
 * @property {HTMLDivElement} resubmitArea
 * @property {ChainView} chain
 * @property {Map<number, FileFollower | null>} followers  by file id; null for a file shown as a link
 * @property {ReturnType<typeof setTimeout> | undefined} pollTimer
 * @property {boolean} stopped
 * @property {boolean} reloading
 * @property {boolean} again  a reload was asked while one ran
 */

/**
 * @param {Job} job
 * @returns {JobPage}
 */
function jobPage(job) {
  const jobId = job.jobId;
  return {
    job,
    jobId,
    status: h('span', { id: 'job-status' }),
    estimate: h('p', { class: 'estimate-line', id: 'job-estimate' }),
    actions: h('div'),
    info: h('dl', { class: 'info', id: 'job-info' }),
    params: h('tbody', { id: 'job-params' }),
    notes: h('ul', { class: 'notes' }),
    waiting: h('div'),
    reasons: h('section', { id: 'job-waiting', hidden: true }),
    reasonsAsked: 0,
    history: h('tbody', { id: 'job-history' }),
    historyNote: h('p', { class: 'muted small' }),
    files: h('div', { class: 'files', id: 'job-files' }),
    resubmitArea: h('div'),
    chain: chainView(jobId, async (list) => markCriticalPath(list, await estimateOf(jobId))),
    followers: new Map(),
    pollTimer: undefined,
    stopped: false,
    reloading: false,
    again: false,
  };
}

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} params
 */
export async function renderJob(main, { id = '' }) {
  /** @type {Job} */
  let job;
  try {
    job = await api('GET', `/Job/${encodeURIComponent(id)}`);
  } catch (err) {
    fill(main, h('h1', {}, `Job ${id}`), h('p', { class: 'error' }, errorText(err)));
    return;
  }
  const page = jobPage(job);
  const unsubscribe = onFeed((batch, resync) => {
    if (resync || batch.some((ev) => jobIdOf(ev) === page.jobId)) void reload(page);
  });
  layOut(main, page);
  render(page);
  void loadHistory(page);
  schedulePoll(page);
  return () => {
    page.stopped = true;
    unsubscribe();
    clearTimeout(page.pollTimer);
    page.chain.stop();
    for (const f of page.followers.values()) f?.stop();
  };
}

/**
 * The page's frame: title, status, actions and the sections, in the order a reader meets them.
 * @param {HTMLElement} main
 * @param {JobPage} page
 */
function layOut(main, page) {
  const { job, jobId } = page;
  const title = h('h1', {}, `Job ${jobId} `, h('span', { class: 'muted' }, text(job.JobDefinition)), ' ');
  fill(
    main,
    title,
    page.status,
    page.estimate,
    page.actions,
    page.waiting,
    page.reasons,
    h(
      'div',
      { class: 'cols' },
      h('section', {}, h('h2', {}, 'Job'), page.info, page.notes),
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
          page.params,
        ),
      ),
    ),
    page.resubmitArea,
    page.chain.element,
    h('section', {}, h('h2', {}, 'Output'), page.files),
    historySection(page),
  );
}

/** @param {JobPage} page */
function historySection(page) {
  return h(
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
      page.history,
    ),
    page.historyNote,
  );
}

/**
 * Fills every section from the job as last read.
 * @param {JobPage} page
 */
function render(page) {
  const { job } = page;
  fill(page.status, h('span', { class: statusClass(job.Status) }, job.Status));
  fill(
    page.actions,
    actionButtons(job, {
      changed: () => void reload(page),
      resubmit: () => openResubmit(page),
      edit: () => openEdit(page),
    }),
  );
  renderInfo(page.info, job);
  renderParams(page.params, job);
  fill(
    page.notes,
    (job.JobNotes ?? []).map((n) => h('li', {}, n)),
  );
  fill(
    page.waiting,
    job.UserMessage || job.OperatorMessage
      ? h(
          'p',
          { class: 'notice info' },
          'This job waits for a reply. ',
          h('a', { href: '#/inbox' }, 'Answer it in the inbox'),
        )
      : null,
  );
  void loadReasons(page);
  void estimateLine(page.estimate, job, isFinal);
  renderFiles(page);
}

/**
 * @param {HTMLDListElement} info
 * @param {Job} job
 */
function renderInfo(info, job) {
  fill(
    info,
    INFO.map(([label, key]) => [
      h('dt', {}, label),
      h(
        'dd',
        {},
        key === 'JobDefinition' && job.JobDefinition
          ? h('a', { href: `#/definition/${encodeURIComponent(job.JobDefinition)}` }, job.JobDefinition)
          : text(job[key]),
      ),
    ]),
    job.ParentJob
      ? [h('dt', {}, 'Parent job'), h('dd', {}, h('a', { href: `#/job/${job.ParentJob}` }, String(job.ParentJob)))]
      : null,
  );
}

/**
 * @param {HTMLTableSectionElement} params
 * @param {Job} job
 */
function renderParams(params, job) {
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
}

/**
 * Adds the files not shown yet: a log is followed live, any other file is a download link.
 * @param {JobPage} page
 */
function renderFiles(page) {
  const { job, files, followers } = page;
  if (!job.JobFiles?.length && !files.children.length) fill(files, h('p', { class: 'muted' }, 'No files.'));
  else if (job.JobFiles?.length && files.firstElementChild?.tagName === 'P' && followers.size === 0) fill(files);
  for (const f of job.JobFiles ?? []) {
    if (followers.has(f.uniqueId)) continue;
    const isLog = /\.(log|txt|out|err)$/.test(f.Name);
    if (isLog) {
      // The follower reads the page's current job, so it stops once the job as last read is final.
      const follower = followFile(f, () => isFinal(page.job.Status));
      followers.set(f.uniqueId, follower);
      files.append(follower.element);
    } else if (f.Name.endsWith('.csv') && isFinal(job.Status)) {
      // A SQL job's result.csv (or any CSV file of a finished job): its first rows as a table.
      followers.set(f.uniqueId, null);
      files.append(csvPreview(f, `${jsonBase()}/JobFile/${f.uniqueId}/content`));
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

/**
 * Why a job that has not started waits, in the server's words; nothing for a job past that.
 * @param {JobPage} page
 */
async function loadReasons(page) {
  const mine = ++page.reasonsAsked;
  /** @type {Waiting | null} */
  let answer = null;
  if (WAITING_STATUSES.has(page.job.Status)) {
    try {
      answer = await api('GET', `/Job/${page.jobId}/waiting`);
    } catch {
      answer = null; // a server without the endpoint, or the job just removed: the page shows no reasons
    }
  }
  if (mine !== page.reasonsAsked) return;
  const list = answer?.Reasons ?? [];
  page.reasons.hidden = list.length === 0;
  fill(page.reasons, list.length ? [h('h2', {}, 'Why it waits'), reasonList(list)] : null);
}

/** @param {JobPage} page */
async function loadHistory(page) {
  try {
    /** @type {Page<HistoryEntry>} */
    const res = await api('GET', `/Job/${page.jobId}/history`);
    const items = res.items ?? [];
    fill(page.history, items.map(historyRow));
    page.historyNote.textContent = items.length ? '' : 'No status changes recorded.';
  } catch (err) {
    page.historyNote.textContent =
      err instanceof ApiError && (err.status === 404 || err.status === 405)
        ? 'History is not available.'
        : errorText(err);
  }
}

/** @param {HistoryEntry} e */
function historyRow(e) {
  return h(
    'tr',
    {},
    h('td', { class: 'time' }, text(e.Time)),
    h('td', {}, e.FromStatus ? h('span', { class: statusClass(e.FromStatus) }, e.FromStatus) : '—'),
    h('td', {}, h('span', { class: statusClass(e.ToStatus) }, e.ToStatus)),
    h('td', {}, e.User ? `${e.Cause} by ${e.User}` : text(e.Cause)),
    h('td', { class: 'desc' }, text(e.Detail)),
  );
}

/**
 * Re-reads the job; a reload asked while one runs is done once after it, not alongside.
 * @param {JobPage} page
 */
async function reload(page) {
  if (page.reloading) {
    page.again = true;
    return;
  }
  page.reloading = true;
  clearTimeout(page.pollTimer);
  page.pollTimer = undefined;
  try {
    page.job = await api('GET', `/Job/${page.jobId}`);
    render(page);
    for (const f of page.followers.values()) f?.poke();
    void loadHistory(page);
    page.chain.refresh();
  } catch (err) {
    notice(errorText(err), 'error');
  }
  page.reloading = false;
  if (page.again && !page.stopped) {
    page.again = false;
    void reload(page);
  } else schedulePoll(page);
}

/** @param {JobPage} page */
function schedulePoll(page) {
  if (page.stopped || page.pollTimer) return;
  page.pollTimer = setTimeout(() => {
    page.pollTimer = undefined;
    if (!feedOpen() && !isFinal(page.job.Status)) void reload(page);
    else schedulePoll(page);
  }, 2000);
}

/**
 * The "Edit" form of a job that has not started, in the resubmit form's place; saved, the page reads the job again.
 * @param {JobPage} page
 */
function openEdit(page) {
  const { job, resubmitArea } = page;
  const close = () => fill(resubmitArea);
  fill(
    resubmitArea,
    h('h2', {}, `Edit job ${job.jobId}`),
    jobEditForm(job, {
      saved: () => {
        close();
        notice(`Job ${job.jobId} changed`);
        void reload(page);
      },
      cancel: close,
    }),
  );
  resubmitArea.scrollIntoView();
}

/** @param {JobPage} page */
function openResubmit(page) {
  const { job, jobId, resubmitArea } = page;
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
        /** @type {Job} */
        const created = await api('PUT', `/Job/${jobId}`, body);
        navigate(`/job/${created.jobId}`);
      },
    }),
  );
  resubmitArea.scrollIntoView();
}
