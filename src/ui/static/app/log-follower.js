/**
 * Follows a job file as the job writes it: `Range: bytes=<bytes read>-` once a second, appending only what is
 * new (a streaming TextDecoder keeps a character split across two reads whole). Stops after the job has ended
 * and one more read found nothing new.
 */
import { apiRaw } from './api.js';
import { h } from './dom.js';

const MAX_SHOWN = 2 * 1024 * 1024;

export function followFile(file, isDone) {
  const pre = h('pre', { class: 'log', 'data-file': file.Name });
  const note = h('p', { class: 'muted small' });
  const decoder = new TextDecoder();
  let offset = 0;
  let timer = null;
  let stopped = false;
  let busy = false;

  /** One read; true when there is nothing more to follow. */
  async function readOnce() {
    const done = isDone();
    try {
      const res = await apiRaw(`/JobFile/${file.uniqueId}/content`, { Range: `bytes=${offset}-` });
      if (res.status === 416) {
        note.textContent = `${offset} bytes${done ? '' : ' · following'}`;
        return done;
      }
      if (res.status !== 200 && res.status !== 206) {
        note.textContent = `Cannot read ${file.Name} (${res.status})`;
        return true;
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (res.status === 200 && offset > 0) {
        // The whole file came back (no range served): show it again from the start.
        pre.textContent = '';
        offset = 0;
      }
      if (bytes.length > 0) {
        offset += bytes.length;
        const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        pre.appendChild(document.createTextNode(decoder.decode(bytes, { stream: true })));
        if (pre.textContent.length > MAX_SHOWN) pre.textContent = pre.textContent.slice(-MAX_SHOWN);
        if (atBottom) pre.scrollTop = pre.scrollHeight;
      }
      note.textContent = `${offset} bytes${done ? '' : ' · following'}`;
      return done && bytes.length === 0;
    } catch {
      note.textContent = 'Connection lost; retrying';
      return false;
    }
  }

  async function read() {
    timer = null;
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
