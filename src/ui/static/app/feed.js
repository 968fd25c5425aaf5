/**
 * The live feed (`GET {base}/stream`, Server-Sent Events) shared by every page. Events are not handed on one by
 * one: they are collected and delivered as one batch per animation frame (or every 250 ms while the tab is hidden
 * and frames stop), so 1,000 job updates a second cost a few repaints, not 1,000. EventSource reconnects by
 * itself and sends Last-Event-ID, so the server resumes where it left off.
 */
import { jsonBase } from './api.js';
/** @import { FeedEvent } from './api-types.js' */

/**
 * A page's listener: the events since the last batch, and whether it should re-read what it shows instead.
 * @typedef {(batch: FeedEvent[], resync: boolean) => void} FeedListener
 */

/** The feed's event names (README, "Live feed"); `reset` says events were lost: pages re-read what they show. */
const EVENT_TYPES = ['job', 'operator-message', 'user-message', 'alert', 'process-server', 'reset'];
/** Beyond this many waiting events a batch says "resync" instead: pages reload what they show. */
const MAX_BATCH = 5000;

/** @type {Set<FeedListener>} */
const listeners = new Set();
/** @type {Set<(open: boolean) => void>} */
const stateListeners = new Set();
/** @type {EventSource | null} */
let source = null;
/** @type {FeedEvent[]} */
let pending = [];
let overflow = false;
let scheduled = false;
let open = false;
/** Counts shown on the feed indicator (data-events, data-batches): how well batching works, for benchmarks. */
const counts = { events: 0, batches: 0 };

function flush() {
  if (!scheduled) return;
  scheduled = false;
  const batch = pending;
  const resync = overflow;
  pending = [];
  overflow = false;
  counts.events += batch.length;
  counts.batches += 1;
  const indicator = document.getElementById('feed-state');
  if (indicator) {
    indicator.dataset.events = String(counts.events);
    indicator.dataset.batches = String(counts.batches);
  }
  for (const fn of listeners) fn(batch, resync);
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(flush);
  setTimeout(flush, 250);
}

/**
 * @param {string} type  one of EVENT_TYPES
 * @param {MessageEvent<string>} e
 */
function received(type, e) {
  if (type === 'reset') {
    overflow = true;
    schedule();
    return;
  }
  /** @type {unknown} */
  let data;
  try {
    data = JSON.parse(e.data);
  } catch {
    return;
  }
  // The event's data as the server writes it for its event name (api-types.js FeedEvent), taken on trust.
  if (pending.length >= MAX_BATCH) overflow = true;
  else pending.push(/** @type {FeedEvent} */ ({ type, id: e.lastEventId, data }));
  schedule();
}

/** @param {boolean} value */
function setOpen(value) {
  if (open === value) return;
  open = value;
  for (const fn of stateListeners) fn(open);
}

let wanted = false;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let retry;

export function startFeed() {
  wanted = true;
  if (source) return;
  const es = new EventSource(`${jsonBase()}/stream`, { withCredentials: true });
  source = es;
  for (const t of EVENT_TYPES) es.addEventListener(t, (e) => received(t, e));
  es.addEventListener('open', () => {
    setOpen(true);
    // Events may have been missed while away beyond what the server replays: pages re-read what they show.
    overflow = true;
    schedule();
  });
  es.addEventListener('error', () => {
    setOpen(es.readyState === EventSource.OPEN);
    // EventSource retries by itself unless the server answered with an error status; then start anew later.
    if (es.readyState === EventSource.CLOSED && source === es) {
      source = null;
      clearTimeout(retry);
      retry = setTimeout(() => wanted && startFeed(), 5000);
    }
  });
}

export function stopFeed() {
  wanted = false;
  clearTimeout(retry);
  source?.close();
  source = null;
  setOpen(false);
}

/**
 * `fn(batch, resync)` with batch = [{type, id, data}]; returns the unsubscribe function.
 * @param {FeedListener} fn
 * @returns {() => void}
 */
export function onFeed(fn) {
  listeners.add(fn);
  return () => {
    listeners.delete(fn);
  };
}

/**
 * `fn(open)` now and whenever the feed opens or closes; returns the unsubscribe function.
 * @param {(open: boolean) => void} fn
 * @returns {() => void}
 */
export function onFeedState(fn) {
  stateListeners.add(fn);
  fn(open);
  return () => {
    stateListeners.delete(fn);
  };
}

export const feedOpen = () => open;

/**
 * The job id an event is about, if any.
 * @param {FeedEvent} ev
 * @returns {number | null}
 */
export const jobIdOf = (ev) => (ev.type === 'job' ? ev.data.jobId : null);

/**
 * The status a job event says the job has now, if any.
 * @param {FeedEvent} ev
 * @returns {string | null}
 */
export const statusOf = (ev) => (ev.type === 'job' ? ev.data.to : null);
