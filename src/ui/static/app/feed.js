/**
 * The live feed (`GET {base}/stream`, Server-Sent Events) shared by every page. Events are not handed on one by
 * one: they are collected and delivered as one batch per animation frame (or every 250 ms while the tab is hidden
 * and frames stop), so 1,000 job updates a second cost a few repaints, not 1,000. EventSource reconnects by
 * itself and sends Last-Event-ID, so the server resumes where it left off.
 */
import { jsonBase } from './api.js';

const EVENT_TYPES = ['message', 'job', 'jobStatus', 'operatorMessage', 'userMessage', 'alert', 'processServer'];
/** Beyond this many waiting events a batch says "resync" instead: pages reload what they show. */
const MAX_BATCH = 5000;

const listeners = new Set();
const stateListeners = new Set();
let source = null;
let pending = [];
let overflow = false;
let scheduled = false;
let open = false;

function flush() {
  if (!scheduled) return;
  scheduled = false;
  const batch = pending;
  const resync = overflow;
  pending = [];
  overflow = false;
  for (const fn of listeners) fn(batch, resync);
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(flush);
  setTimeout(flush, 250);
}

function received(type, e) {
  let data;
  try {
    data = JSON.parse(e.data);
  } catch {
    return;
  }
  if (pending.length >= MAX_BATCH) overflow = true;
  else pending.push({ type: e.type === 'message' ? (data?.type ?? type) : e.type, id: e.lastEventId, data });
  schedule();
}

function setOpen(value) {
  if (open === value) return;
  open = value;
  for (const fn of stateListeners) fn(open);
}

export function startFeed() {
  if (source) return;
  source = new EventSource(`${jsonBase()}/stream`, { withCredentials: true });
  for (const t of EVENT_TYPES) source.addEventListener(t, (e) => received(t, e));
  source.addEventListener('open', () => setOpen(true));
  source.addEventListener('error', () => setOpen(source?.readyState === EventSource.OPEN));
}

export function stopFeed() {
  source?.close();
  source = null;
  setOpen(false);
}

/** `fn(batch, resync)` with batch = [{type, id, data}]; returns the unsubscribe function. */
export function onFeed(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function onFeedState(fn) {
  stateListeners.add(fn);
  fn(open);
  return () => stateListeners.delete(fn);
}

export const feedOpen = () => open;

/** The job id an event is about, if any. */
export const jobIdOf = (ev) => ev.data?.jobId ?? ev.data?.JobId ?? ev.data?.job?.jobId ?? null;

/** The status a job event says the job has now, if any. */
export const statusOf = (ev) => ev.data?.to ?? ev.data?.status ?? ev.data?.Status ?? null;
