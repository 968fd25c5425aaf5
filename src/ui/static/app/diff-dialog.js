/**
 * Before an edit is saved: what it changes, field by field (before → after), in an in-page dialog; answers true
 * only when the person confirms. Closed any other way (Escape, leaving the page: dom.js closeDialogs) it is "no".
 */
import { h, showDialog } from './dom.js';

/**
 * @param {string} title
 * @param {{ field: string, before: string, after: string }[]} rows
 * @returns {Promise<boolean>}
 */
export function confirmChanges(title, rows) {
  const yes = h('button', { type: 'button', id: 'diff-save' }, 'Save');
  const no = h('button', { type: 'button', id: 'diff-cancel' }, 'Keep editing');
  const table = h(
    'table',
    { class: 'diff', id: 'diff-table' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Field'), h('th', {}, 'Before'), h('th', {}, 'After'))),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          { 'data-field': r.field },
          h('td', {}, r.field),
          h('td', { class: 'before' }, h('pre', {}, r.before)),
          h('td', { class: 'after' }, h('pre', {}, r.after)),
        ),
      ),
    ),
  );
  const dialog = h(
    'dialog',
    { class: 'confirm diff-dialog', id: 'diff' },
    h('p', {}, title),
    table,
    h('div', {}, yes, ' ', no),
  );
  let answer = false;
  yes.addEventListener('click', () => {
    answer = true;
    dialog.close();
  });
  no.addEventListener('click', () => dialog.close());
  return showDialog(dialog, yes, () => answer);
}
