/**
 * What can be done with one definition, as buttons: edit it, copy it (the create form filled from it, with a new
 * name), delete it (asked first), and download it as a CAR file. Only the actions the user's grants allow are
 * offered; the server refuses the others anyway.
 */
import { api } from './api.js';
import { confirmAction } from './confirm.js';
import { h, notice } from './dom.js';
import { errorText } from './format.js';
import { navigate } from './router.js';
import { can, canSomewhere, partitionOf } from './session.js';

/** Types with a page of their own; the others are shown by their form (pages/definition-edit.js). */
const PAGES = /** @type {Record<string, string>} */ ({
  JobDefinition: '/definition',
  TimeWindow: '/timewindow',
  EventDefinition: '/eventdefinition',
});

/**
 * Where an object is shown.
 * @param {string} type
 * @param {string} key
 */
export const viewPath = (type, key) =>
  PAGES[type] ? `${PAGES[type]}/${encodeURIComponent(key)}` : `/object/${type}/${encodeURIComponent(key)}`;

/**
 * The partition whose grants govern an object: a partition's own name, else its key's first part.
 * @param {string} type
 * @param {string} key
 */
export const partitionOfObject = (type, key) => (type === 'Partition' ? key : partitionOf(key));

/**
 * @param {string} type
 * @param {string} key
 * @param {{ edit?: boolean }} [options]  `edit`: offer the edit button (not on the edit page itself)
 */
export function definitionActions(type, key, { edit = true } = {}) {
  const partition = partitionOfObject(type, key);
  const path = `${type}/${encodeURIComponent(key)}`;
  const buttons = [];
  if (edit && can(type, partition, 'Edit'))
    buttons.push(
      h('a', { class: 'button', href: `#/object/${path}`, 'data-action': 'edit', id: 'definition-edit' }, 'Edit'),
    );
  if (canSomewhere(type, 'Create'))
    buttons.push(
      h('a', { class: 'button', href: `#/new/${type}?copy=${encodeURIComponent(key)}`, 'data-action': 'copy' }, 'Copy'),
    );
  if (can(type, partition, 'Delete')) {
    const del = h('button', { type: 'button', class: 'danger', 'data-action': 'delete' }, 'Delete');
    del.addEventListener('click', async () => {
      if (!(await confirmAction(`Delete ${type} ${key}?`, 'Delete'))) return;
      del.disabled = true;
      try {
        await api('DELETE', `/${path}`);
        notice(`Deleted ${type} ${key}`);
        navigate('/definitions', { type });
      } catch (err) {
        notice(errorText(err), 'error');
        del.disabled = false;
      }
    });
    buttons.push(del);
  }
  // A plain link: the browser sends the session cookie and saves the answer (Content-Disposition: attachment).
  buttons.push(
    h('a', { class: 'button', href: `api/car/${path}`, download: '', 'data-action': 'export' }, 'Export CAR'),
  );
  return h('div', { class: 'actions', id: 'definition-actions' }, buttons);
}
