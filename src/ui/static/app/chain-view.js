/**
 * A chain job as its steps and each step's calls, with their statuses: the children of a job are
 * `GET {base}/Job?ParentJob=<id>`. Re-read when the feed names one of them (or every 3 s without the feed).
 */
import { api, withQuery } from './api.js';
import { fill, h } from './dom.js';
import { feedOpen, jobIdOf, onFeed } from './feed.js';
import { statusClass, text } from './format.js';
import { isFinal } from './session.js';

const FIELDS = 'jobId,JobDefinition,Description,Status,ReturnCode,RunStart,RunEnd';

async function children(id) {
  const res = await api('GET', withQuery('/Job', { ParentJob: id, Limit: 1000, fields: FIELDS }));
  return [...res.items].sort((a, b) => a.jobId - b.jobId);
}

const badge = (job) => h('span', { class: statusClass(job.Status), 'data-status-of': job.jobId }, job.Status);
const line = (job) =>
  h(
    'span',
    {},
    h('a', { href: `#/job/${job.jobId}` }, String(job.jobId)),
    ' ',
    text(job.JobDefinition),
    ' ',
    badge(job),
  );

/**
 * A section that shows itself only when the job has children; `onLoad` is told each time the steps are shown
 * (the job page marks the critical path on them).
 */
export function chainView(jobId, onLoad) {
  const list = h('ol', { class: 'chain', id: 'chain' });
  const section = h('section', { hidden: true }, h('h2', {}, 'Steps and calls'), list);
  const ids = new Set();
  let timer = null;
  let stopped = false;

  async function load() {
    timer = null;
    try {
      const steps = await children(jobId);
      const withCalls = await Promise.all(steps.map(async (s) => ({ step: s, calls: await children(s.jobId) })));
      ids.clear();
      const items = withCalls.map(({ step, calls }) => {
        ids.add(step.jobId);
        for (const c of calls) ids.add(c.jobId);
        return h(
          'li',
          {},
          line(step),
          calls.length
            ? h(
                'ul',
                {},
                calls.map((c) => h('li', {}, line(c))),
              )
            : null,
        );
      });
      fill(list, items);
      section.hidden = steps.length === 0;
      if (steps.length > 0) onLoad?.(list);
      // Without the feed, re-read while some step or call is not final (a job without steps never gets any).
      const all = withCalls.flatMap(({ step, calls }) => [step, ...calls]);
      if (!stopped && !feedOpen() && all.some((j) => !isFinal(j.Status))) timer = setTimeout(load, 3000);
    } catch {
      // Lists not available: no chain view.
    }
  }

  const unsubscribe = onFeed((batch, resync) => {
    if (
      resync ||
      batch.some((ev) => ids.has(jobIdOf(ev)) || ev.data?.parentJob === jobId || ev.data?.ParentJob === jobId)
    ) {
      clearTimeout(timer);
      timer = setTimeout(load, 100);
    }
  });
  void load();
  return {
    element: section,
    refresh: () => {
      clearTimeout(timer);
      timer = setTimeout(load, 0);
    },
    stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
    },
  };
}
