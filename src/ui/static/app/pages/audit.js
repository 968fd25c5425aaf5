/**
 * The Audit page (docs/architecture.md §18): the audit log newest first, filtered by object, user, action and time
 * (`GET {base}/AuditEntry`), each change's fields before and after side by side, and a restore from an entry after
 * a confirmation (`POST {base}/AuditEntry/<id>/restore`). Readable by the Auditor role and administrators.
 */
import { api, withQuery } from '../api.js';
import { confirmAction } from '../confirm.js';
import { fieldValue, fill, h, notice } from '../dom.js';
import { navigate } from '../router.js';

/**
 * One entry, as `GET /AuditEntry` answers it.
 * @typedef {{
 *   Id: number, Time: string, User: string, ApiKeyId: string | null, Address: string | null, Interface: string,
 *   Action: string, ObjectType: string | null, ObjectKey: string | null, Detail: string | null,
 *   Changes: { Field: string, Before: unknown, After: unknown }[], Restorable: boolean
 * }} AuditEntry
 */

/** The filters of the page, as the query of its address and of the request. */
const FILTERS = ['Type', 'Key', 'User', 'Action', 'Since', 'Until'];

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} _params
 * @param {Record<string, string>} query
 * @returns {void}
 */
export function renderAudit(main, _params, query) {
  const form = filterForm(query);
  const info = h('p', { class: 'muted', id: 'audit-info', role: 'status' }, 'Loading the audit log…');
  const table = h('div', { id: 'audit-table' });
  const detail = h('div', { id: 'audit-detail' });
  const more = h('button', { type: 'button', id: 'audit-older', hidden: true }, 'Older entries');
  fill(main, h('h1', {}, 'Audit'), form, info, table, more, detail);
  /** @type {string | null} */
  let next = null;
  /** @type {AuditEntry[]} */
  let shown = [];

  /** @param {boolean} older  whether to add the next page to the one shown */
  async function load(older) {
    try {
      const filters = Object.fromEntries(FILTERS.map((f) => [f, query[f]]));
      const res = /** @type {{ items: AuditEntry[], next: string | null }} */ (
        await api('GET', withQuery('/AuditEntry', { ...filters, Limit: 50, After: older ? next : undefined }))
      );
      shown = older ? [...shown, ...res.items] : res.items;
      next = res.next;
      info.textContent = shown.length ? `${shown.length} entries, newest first.` : 'No entries match.';
      fill(table, shown.length ? entryTable(shown, (e) => showDetail(e)) : null);
      more.hidden = next === null;
    } catch (err) {
      info.textContent = err instanceof Error ? err.message : String(err);
    }
  }

  /** @param {AuditEntry} e */
  function showDetail(e) {
    fill(
      detail,
      entryDetail(e, async () => restore(e)),
    );
  }

  /** @param {AuditEntry} e */
  async function restore(e) {
    const what = `${e.ObjectType}:${e.ObjectKey}`;
    const question =
      e.Action === 'delete'
        ? `Create ${what} again as it was before entry ${e.Id}?`
        : `Put ${what} back as it was before entry ${e.Id}?`;
    if (!(await confirmAction(question, 'Restore'))) return;
    try {
      await api('POST', `/AuditEntry/${e.Id}/restore`);
      notice(`${what} restored from entry ${e.Id}.`);
      fill(detail);
      await load(false);
    } catch (err) {
      notice(err instanceof Error ? err.message : String(err), 'error');
    }
  }

  more.addEventListener('click', () => void load(true));
  void load(false);
}

/**
 * @param {Record<string, string>} query
 * @returns {HTMLFormElement}
 */
function filterForm(query) {
  const input = (/** @type {string} */ name, /** @type {string} */ placeholder) =>
    h('label', {}, `${name} `, h('input', { name, id: `au-${name}`, value: query[name] ?? '', placeholder, size: 16 }));
  const form = /** @type {HTMLFormElement} */ (
    h(
      'form',
      { id: 'audit-filters', class: 'filters' },
      input('Type', 'JobDefinition'),
      input('Key', 'GLOBAL.Nightly'),
      input('User', 'alice'),
      input('Action', 'update'),
      input('Since', '2026-11-01'),
      input('Until', '2026-11-30T23:59:59Z'),
      h('button', { type: 'submit' }, 'Show'),
    )
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    navigate('/audit', Object.fromEntries(FILTERS.map((f) => [f, fieldValue(form, f).trim()])));
  });
  return form;
}

/**
 * @param {AuditEntry[]} entries
 * @param {(e: AuditEntry) => void} open
 * @returns {HTMLElement}
 */
function entryTable(entries, open) {
  return h(
    'table',
    { class: 'list', id: 'audit' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['#', 'Time', 'User', 'Via', 'Action', 'Object', 'Changes'].map((c) => h('th', {}, c)),
      ),
    ),
    h(
      'tbody',
      {},
      entries.map((e) =>
        h(
          'tr',
          { 'data-id': String(e.Id), 'data-action': e.Action },
          h('td', {}, String(e.Id)),
          h('td', {}, e.Time),
          h('td', {}, e.User || '—'),
          h('td', { title: `${e.Address ?? ''}${e.ApiKeyId ? ` key ${e.ApiKeyId}` : ''}` }, e.Interface),
          h('td', {}, e.Action),
          h('td', {}, e.ObjectType ? `${e.ObjectType}:${e.ObjectKey}` : '—'),
          h(
            'td',
            {},
            e.Changes.length || e.Restorable
              ? h('button', { type: 'button', class: 'link', onclick: () => open(e) }, `${e.Changes.length} fields`)
              : '—',
          ),
        ),
      ),
    ),
  );
}

/**
 * A value of a diff side, as JSON text (secrets arrive as ***).
 * @param {unknown} v
 * @returns {string}
 */
const shownValue = (v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 1));

/**
 * An entry's changes side by side, and its restore button.
 * @param {AuditEntry} e
 * @param {() => void} restore
 * @returns {HTMLElement}
 */
function entryDetail(e, restore) {
  return h(
    'section',
    { id: 'audit-entry', 'data-id': String(e.Id) },
    h('h2', {}, `Entry ${e.Id}: ${e.Action} ${e.ObjectType ?? ''}:${e.ObjectKey ?? ''}`),
    e.Detail ? h('p', { class: 'muted' }, e.Detail) : null,
    h(
      'table',
      { class: 'list diff', id: 'audit-diff' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Field', 'Before', 'After'].map((c) => h('th', {}, c)),
        ),
      ),
      h(
        'tbody',
        {},
        e.Changes.map((c) =>
          h(
            'tr',
            { 'data-field': c.Field },
            h('td', {}, c.Field),
            h('td', { class: 'before' }, h('pre', {}, shownValue(c.Before))),
            h('td', { class: 'after' }, h('pre', {}, shownValue(c.After))),
          ),
        ),
      ),
    ),
    e.Restorable
      ? h(
          'button',
          { type: 'button', id: 'audit-restore', onclick: restore },
          e.Action === 'delete' ? 'Restore the deleted object…' : 'Put the before side back…',
        )
      : null,
  );
}
