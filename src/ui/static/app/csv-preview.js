/**
 * The first rows of a CSV job file (a SQL job's result.csv) as a table: only the file's first bytes are read
 * (`Range`), so a result of a million rows costs the page no more than a small one.
 */
import { apiRaw } from './api.js';
import { h } from './dom.js';
/** @import { JobFile } from './api-types.js' */

const PREVIEW_BYTES = 64 * 1024;
const PREVIEW_ROWS = 20;

/**
 * Records of RFC 4180 text (quoted fields, doubled quotes, CRLF or LF); a record cut off at the end is dropped
 * unless `complete`.
 * @param {string} text
 * @param {boolean} complete  the text is the whole file
 * @returns {string[][]}
 */
export function parseCsv(text, complete) {
  /** @type {string[][]} */
  const rows = [];
  /** @type {string[]} */
  let row = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
    i++;
  }
  if (complete && (field !== '' || row.length > 0)) rows.push([...row, field]);
  return rows;
}

/**
 * A section showing the file's first rows as a table (the header row as column names), with a link to all of it.
 * @param {JobFile} file
 * @param {string} href  the file's content address
 */
export function csvPreview(file, href) {
  const section = h('div', { class: 'csv-preview', 'data-file': file.Name });
  const note = h('p', { class: 'muted small' }, `${file.Name}: reading…`);
  section.append(note);
  void (async () => {
    try {
      const res = await apiRaw(`/JobFile/${file.uniqueId}/content`, { Range: `bytes=0-${PREVIEW_BYTES - 1}` });
      const body = res.status === 416 ? '' : await res.text();
      if (!res.ok && res.status !== 416) {
        note.textContent = `Cannot read ${file.Name} (${res.status})`;
        return;
      }
      const total = Number(/\/(\d+)$/.exec(res.headers.get('content-range') ?? '')?.[1] ?? body.length);
      const complete = res.status !== 206 || total <= PREVIEW_BYTES;
      const [head = [], ...rest] = parseCsv(body, complete);
      const shown = rest.slice(0, PREVIEW_ROWS);
      note.replaceChildren(
        h('a', { href, target: '_blank', rel: 'noopener' }, file.Name),
        ` ${file.Size ?? ''} bytes · first ${shown.length} rows`,
      );
      section.append(
        h(
          'table',
          { class: 'csv' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              head.map((c) => h('th', {}, c)),
            ),
          ),
          h(
            'tbody',
            {},
            shown.map((r) =>
              h(
                'tr',
                {},
                r.map((c) => h('td', {}, c)),
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      note.textContent = `Cannot read ${file.Name}: ${err instanceof Error ? err.message : String(err)}`;
    }
  })();
  return section;
}
