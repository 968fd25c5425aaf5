/**
 * An event definition (`GET {base}/EventDefinition/<key>`): its fields, and its file watches (`FileEvents`) with
 * what the agent of each process server last reported of them (`GET {base}/ProcessServer/<key>/filewatches`,
 * docs/architecture.md §7b), and its events with Delete on the Cleared ones (event-list.js).
 */
import { api } from '../api.js';
import { definitionActions } from '../definition-actions.js';
import { fill, h } from '../dom.js';
import { errorText, text } from '../format.js';
import { eventList } from '../event-list.js';
/** @import { EventDefinition, FileWatch, Page } from '../api-types.js' */

/** Shown elsewhere on the page (the title, the watches table) or only the interface's bookkeeping. */
const SKIP = new Set(['uniqueId', 'businessKey', 'Name', 'Partition', 'FileEvents']);

/**
 * The watches of the definition on each process server its FileEvents name, as their agents reported them; a
 * process server the user may not view, or one whose report cannot be read, shows the error in its rows.
 * @param {string} fullKey
 * @param {Record<string, unknown>[]} items
 * @returns {Promise<Map<string, FileWatch | string>>}  by `<process server> <directory> <pattern>`
 */
async function reports(fullKey, items) {
  /** @type {Map<string, FileWatch | string>} */
  const found = new Map();
  const servers = [...new Set(items.map((f) => String(f.ProcessServer)))];
  for (const ps of servers) {
    try {
      /** @type {Page<FileWatch>} */
      const res = await api('GET', `/ProcessServer/${encodeURIComponent(ps)}/filewatches`);
      for (const w of res.items) if (w.EventDefinition === fullKey) found.set(`${ps} ${w.Directory} ${w.Pattern}`, w);
    } catch (err) {
      for (const f of items) if (f.ProcessServer === ps) found.set(`${ps} ${f.Directory} ${f.Pattern}`, errorText(err));
    }
  }
  return found;
}

/**
 * @param {Record<string, unknown>[]} items
 * @param {Map<string, FileWatch | string>} status
 */
function watchesTable(items, status) {
  if (!items.length) return h('p', { class: 'muted' }, 'No file watches: the event is raised through the interface.');
  const head = ['Process server', 'Directory', 'Pattern', 'Poll (s)', 'Stable (s)', 'Move to', 'Enabled'];
  return h(
    'table',
    { class: 'elements', id: 'file-watches' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        [...head, 'Last poll', 'Files seen', 'Last error'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      items.map((f) => {
        const s = status.get(`${f.ProcessServer} ${f.Directory} ${f.Pattern}`);
        const report =
          typeof s === 'string'
            ? [h('td', { colspan: '3', class: 'error' }, s)]
            : f.Enabled === false
              ? [h('td', { colspan: '3', class: 'muted' }, 'not watched (disabled)')]
              : [
                  h('td', { 'data-field': 'LastPoll' }, text(s?.LastPoll ?? 'not yet')),
                  h('td', { 'data-field': 'FilesSeen' }, text(s?.FilesSeen ?? 0)),
                  h('td', { 'data-field': 'LastError', class: s?.LastError ? 'error' : '' }, text(s?.LastError ?? '')),
                ];
        return h(
          'tr',
          {},
          [f.ProcessServer, f.Directory, f.Pattern, f.PollSeconds, f.StableSeconds, f.MoveDirectory, f.Enabled].map(
            (v) => h('td', {}, text(v)),
          ),
          report,
        );
      }),
    ),
  );
}

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} params
 */
export async function renderEventDefinition(main, { key = '' }) {
  /** @type {EventDefinition} */
  let d;
  try {
    d = await api('GET', `/EventDefinition/${encodeURIComponent(key)}`);
  } catch (err) {
    fill(main, h('h1', {}, key), h('p', { class: 'error' }, errorText(err)));
    return;
  }
  const fullKey = `${d.Partition}.${d.Name}`;
  const items = d.FileEvents ?? [];
  const status = await reports(fullKey, items);
  const fields = Object.entries(d).filter(([k]) => !SKIP.has(k));
  fill(
    main,
    h('h1', {}, fullKey, ' ', h('span', { class: 'muted' }, 'Event definition')),
    definitionActions('EventDefinition', fullKey),
    h(
      'dl',
      { class: 'info', id: 'event-definition-info' },
      fields.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-field': k }, text(v))]),
    ),
    h('h2', {}, 'File watches'),
    watchesTable(items, status),
    eventList(fullKey, d.Partition),
  );
}
