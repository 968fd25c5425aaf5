/**
 * A time window (`GET {base}/TimeWindow/<key>`): its fields as the server answers them, so a field the registry
 * gains shows here by itself; references to other windows are links; its elements a table of the restrictions
 * they set; and its calendar of open days.
 */
import { api } from '../api.js';
import { definitionActions } from '../definition-actions.js';
import { fill, h } from '../dom.js';
import { errorText, text } from '../format.js';
import { monthCalendar } from '../month-calendar.js';
/** @import { Page, TimeWindow } from '../api-types.js' */

/** Shown elsewhere on the page (the title, the elements table) or only the interface's bookkeeping. */
const SKIP = new Set(['uniqueId', 'businessKey', 'Name', 'Partition', 'Elements']);

/** @param {string} key */
const windowLink = (key) => h('a', { href: `#/timewindow/${encodeURIComponent(key)}` }, key);

/**
 * A field's value; a string naming another time window (a reference) links to its page.
 * @param {string} name
 * @param {unknown} v
 * @param {Set<string>} windows  the keys of the windows the user may view
 */
function value(name, v, windows) {
  if (typeof v === 'string' && windows.has(v) && name !== 'Description' && name !== 'Comment') return windowLink(v);
  if (v !== null && typeof v === 'object') return h('code', {}, JSON.stringify(v));
  return text(v);
}

/** @param {Record<string, unknown>[]} elements */
function elementsTable(elements) {
  if (!elements.length) return h('p', { class: 'muted' }, 'No elements: the window opens only through its references.');
  const columns = [...new Set(elements.flatMap((e) => Object.keys(e).filter((k) => e[k] !== null)))];
  return h(
    'table',
    { class: 'elements', id: 'window-elements' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      elements.map((e) =>
        h(
          'tr',
          {},
          columns.map((c) => h('td', {}, text(e[c]))),
        ),
      ),
    ),
  );
}

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} params
 */
export async function renderTimeWindow(main, { key = '' }) {
  /** @type {TimeWindow} */
  let w;
  try {
    w = await api('GET', `/TimeWindow/${encodeURIComponent(key)}`);
  } catch (err) {
    fill(main, h('h1', {}, key), h('p', { class: 'error' }, errorText(err)));
    return;
  }
  const fullKey = `${w.Partition}.${w.Name}`;
  // Which strings are window keys: those the caller may see (a reference to one it may not see stays text).
  /** @type {Set<string>} */
  let windows = new Set();
  try {
    /** @type {Page<TimeWindow>} */
    const res = await api('GET', `/TimeWindow?Limit=1000&fields=Partition,Name`);
    windows = new Set(res.items.map((x) => `${x.Partition}.${x.Name}`));
  } catch {
    // Without the list the references show as text.
  }
  const fields = Object.entries(w).filter(([k]) => !SKIP.has(k));
  const calendar = monthCalendar(fullKey, w.TimeZone || null);
  fill(
    main,
    h('h1', {}, fullKey, ' ', h('span', { class: 'muted' }, 'Time window')),
    h(
      'p',
      {},
      h('a', { href: `#/forecast?Calendar=${encodeURIComponent(fullKey)}` }, 'The forecast with this window shaded'),
    ),
    definitionActions('TimeWindow', fullKey),
    h(
      'div',
      { class: 'cols' },
      h(
        'section',
        {},
        h('h2', {}, 'Window'),
        h(
          'dl',
          { class: 'info', id: 'window-info' },
          fields.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-field': k }, value(k, v, windows))]),
        ),
      ),
      h('section', {}, h('h2', {}, 'Elements'), elementsTable(w.Elements ?? [])),
    ),
    calendar.element,
  );
}
