/**
 * Follows a job file as the job writes it. Once a second it asks the file's size (HEAD) and, when the file has
 * grown, reads only the new bytes (`Range: bytes=<read>-<size - 1>`): it never asks for a range past the end, a
 * 416 the browser would log as an error at every look while the job is quiet. A streaming TextDecoder keeps a
 * character split across two reads whole. Stops after the job has ended and one more look found nothing new.
 */
import { apiRaw } from './api.js';
import { h } from './dom.js';
/** @import { JobFile } from './api-types.js' */
/**
 * A followed file: its section on the page, `poke()` to read at once, `stop()` when the page is left.
 * @typedef {{ element: HTMLElement, poke: () => void, stop: () => void }} FileFollower
 */

const MAX_SHOWN = 2 * 1024 * 1024;

/**
 * @param {JobFile} file
 * @param {() => boolean} isDone  whether the job has ended
 * @returns {FileFollower}
 */
export function followFile(file, isDone) {
  const pre = h('pre', { class: 'log', 'data-file': file.Name });
  const note = h('p', { class: 'muted small' });
  const path = `/JobFile/${file.uniqueId}/content`;
  let decoder = new TextDecoder();
  let offset = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let stopped = false;
  let busy = false;

  function fromTheStart() {
    pre.textContent = '';
    offset = 0;
    decoder = new TextDecoder();
  }

  /** @param {Uint8Array} bytes */
  function show(bytes) {
    offset += bytes.length;
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.appendChild(document.createTextNode(decoder.decode(bytes, { stream: true })));
    if (pre.textContent.length > MAX_SHOWN) pre.textContent = pre.textContent.slice(-MAX_SHOWN);
    if (atBottom) pre.scrollTop = pre.scrollHeight;
  }

  /** One look; true when there is nothing more to follow. */
  async function readOnce() {
    const done = isDone();
    const following = () => {
      note.textContent = `${offset} bytes${done ? '' : ' · following'}`;
    };
    try {
      const head = await apiRaw(path, {}, 'HEAD');
      await head.arrayBuffer(); // none; read, or the browser counts the request as aborted
      if (!head.ok) {
        note.textContent = `Cannot read ${file.Name} (${head.status})`;
        return true;
      }
      // Without a length (a proxy dropped it) the read asks for whatever follows, as a range to the end.
      const length = head.headers.get('Content-Length');
      const size = length === null ? Number.POSITIVE_INFINITY : Number(length);
      if (size < offset) fromTheStart(); // written again from the start (shorter)
      if (size === offset) {
        following();
        return done;
      }
      const res = await apiRaw(path, { Range: `bytes=${offset}-${Number.isFinite(size) ? size - 1 : ''}` });
      if (res.status === 416) {
        following();
        return done;
      }
      if (res.status !== 200 && res.status !== 206) {
        note.textContent = `Cannot read ${file.Name} (${res.status})`;
        return true;
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      // The whole file came back (no range served): show it again from the start.
      if (res.status === 200 && offset > 0) fromTheStart();
      if (bytes.length > 0) show(bytes);
      following();
      return done && bytes.length === 0;
    } catch {
      note.textContent = 'Connection lost; retrying';
      return false;
    }
  }

  async function read() {
    timer = undefined;
    if (stopped || busy) return;
    busy = true;
    const finished = await readOnce();
    busy = false;
    if (!stopped && !finished) timer = setTimeout(read, isDone() ? 0 : 1000);
  }

  void read();
  return {
    element: h('section', { class: 'file' }, h('h3', {}, file.Name), pre, note),
    /** Called when the job changed: read at once. */
    poke() {
      if (stopped || busy) return;
      clearTimeout(timer);
      timer = setTimeout(read, 0);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
