/**
 * A definition of any type in its form (`#/object/<Type>/<key>`: shown, and edited by a user who may), and the
 * create form (`#/new/<Type>`, `?copy=<key>` to start from an existing one). The forms are made from the registry's
 * declarations (definition-form.js); the server checks what is saved, and its 400 message is shown at the field it
 * names. An edit shows what it changes and saves only once that is confirmed, sending only the changed fields.
 */
import { ApiError, api } from '../api.js';
import { definitionActions, partitionOfObject, viewPath } from '../definition-actions.js';
import { definitionForm } from '../definition-form.js';
import { typeDescription } from '../definition-types.js';
import { changes, copyValues, createBody, diff, fieldOfMessage, objectKey } from '../definition-values.js';
import { confirmChanges } from '../diff-dialog.js';
import { fill, h, notice } from '../dom.js';
import { errorText } from '../format.js';
import { navigate } from '../router.js';
import { can } from '../session.js';
/** @import { DefinitionObject, TypeDescription } from '../api-types.js' */

/**
 * @param {HTMLElement} main
 * @param {string} title
 * @param {string} typeName
 * @returns {Promise<TypeDescription | undefined>}
 */
async function loadType(main, title, typeName) {
  try {
    const type = await typeDescription(typeName);
    if (!type) fill(main, h('h1', {}, title), h('p', { class: 'error' }, `${typeName} is not a definition type.`));
    return type;
  } catch (err) {
    fill(main, h('h1', {}, title), h('p', { class: 'error' }, errorText(err)));
    return undefined;
  }
}

/**
 * Shows a refusal: at the field its message names when the form has it, and above the form in any case.
 * @param {unknown} err
 * @param {ReturnType<typeof definitionForm>} form
 * @param {TypeDescription} type
 * @param {HTMLElement} error
 */
function showRefusal(err, form, type, error) {
  const message = errorText(err);
  const path = err instanceof ApiError && err.status === 400 ? fieldOfMessage(message, type.identity) : null;
  const atField = path !== null && form.showError(path, message);
  error.textContent = atField ? `Not saved: ${path} is not accepted.` : `Not saved: ${message}`;
}

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} params
 */
export async function renderObject(main, { type: typeName = '', key = '' }) {
  const type = await loadType(main, key, typeName);
  if (!type) return;
  /** @type {DefinitionObject} */
  let object;
  try {
    object = await api('GET', `/${type.name}/${encodeURIComponent(key)}`);
  } catch (err) {
    fill(main, h('h1', {}, `${type.name} ${key}`), h('p', { class: 'error' }, errorText(err)));
    return;
  }
  showObject(main, type, object);
}

/**
 * @param {HTMLElement} main
 * @param {TypeDescription} type
 * @param {DefinitionObject} object
 */
function showObject(main, type, object) {
  const key = String(object.businessKey).slice(type.name.length + 1);
  const mayEdit = can(type.name, partitionOfObject(type.name, key), 'Edit');
  const form = definitionForm({ fields: type.fields, values: object, locked: type.identity, readOnly: !mayEdit });
  const error = h('p', { class: 'error', role: 'alert', id: 'definition-error' });
  const save = h('button', { type: 'submit', id: 'definition-save' }, 'Save');
  const el = h('form', { class: 'definition-form', novalidate: true }, form.element, mayEdit ? save : null, error);
  el.addEventListener('submit', async (e) => {
    e.preventDefault();
    form.clearErrors();
    error.textContent = '';
    const { values, problems } = form.read();
    if (problems > 0) {
      error.textContent = 'Not saved: correct the fields marked.';
      return;
    }
    const rows = diff(type.fields, object, values);
    if (rows.length === 0) {
      error.textContent = 'Nothing to save: no field changed.';
      return;
    }
    if (!(await confirmChanges(`Save these changes to ${type.name} ${key}?`, rows))) return;
    save.disabled = true;
    try {
      /** @type {DefinitionObject} */
      const saved = await api('PUT', `/${type.name}/${encodeURIComponent(key)}`, changes(type.fields, object, values));
      showObject(main, type, saved);
      notice(`Saved ${type.name} ${key}`);
    } catch (err) {
      showRefusal(err, form, type, error);
      save.disabled = false;
    }
  });
  fill(
    main,
    h('h1', {}, key, ' ', h('span', { class: 'muted' }, type.name)),
    h('p', { class: 'muted small' }, type.description),
    viewPath(type.name, key).startsWith('/object/')
      ? null
      : h('p', {}, h('a', { href: `#${viewPath(type.name, key)}` }, `Back to the ${type.name}`)),
    definitionActions(type.name, key, { edit: false }),
    el,
  );
}

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} params
 * @param {Record<string, string>} query  `copy`: the key of the object to start from
 */
export async function renderNewObject(main, { type: typeName = '' }, query) {
  const title = query.copy ? `Copy of ${query.copy}` : `New ${typeName}`;
  const type = await loadType(main, title, typeName);
  if (!type) return;
  /** @type {Record<string, unknown>} */
  let start = {};
  if (query.copy)
    try {
      /** @type {DefinitionObject} */
      const original = await api('GET', `/${type.name}/${encodeURIComponent(query.copy)}`);
      start = copyValues(type, original);
    } catch (err) {
      fill(main, h('h1', {}, title), h('p', { class: 'error' }, errorText(err)));
      return;
    }
  // A bare name means GLOBAL on the server too; said in the form rather than left for the reader to know.
  if (type.key === 'partitioned' && !start.Partition) start.Partition = 'GLOBAL';
  const form = definitionForm({ fields: type.fields, values: start });
  const error = h('p', { class: 'error', role: 'alert', id: 'definition-error' });
  const save = h('button', { type: 'submit', id: 'definition-save' }, 'Create');
  const el = h('form', { class: 'definition-form', novalidate: true }, form.element, save, error);
  el.addEventListener('submit', async (e) => {
    e.preventDefault();
    form.clearErrors();
    error.textContent = '';
    const { values, problems } = form.read();
    if (problems > 0) {
      error.textContent = 'Not saved: correct the fields marked.';
      return;
    }
    const key = objectKey(type, values);
    save.disabled = true;
    try {
      await api('POST', `/${type.name}/${encodeURIComponent(key)}`, createBody(values));
      notice(`Created ${type.name} ${key}`);
      navigate(viewPath(type.name, key));
    } catch (err) {
      showRefusal(err, form, type, error);
      save.disabled = false;
    }
  });
  fill(
    main,
    h('h1', {}, title, ' ', h('span', { class: 'muted' }, type.name)),
    h('p', { class: 'muted small' }, type.description),
    el,
  );
}
