/**
 * The "Edit" form of a job that has not started (PATCH /Job/<id>, docs/architecture.md §6): its queue, requested
 * start, priority, description and In values, filled with what it has now. Only what the person changed is sent;
 * the server checks it as a submit and keeps each change in the job's history. Its 400 (or the 409 of a job that
 * started meanwhile) is shown in the form, and nothing is changed.
 */
import { api } from './api.js';
import { h } from './dom.js';
import { errorText, paramValue } from './format.js';
/** @import { Job } from './api-types.js' */

/** A labelled input with the job's current value. */
const labelled = (/** @type {string} */ id, /** @type {string} */ label, /** @type {unknown} */ value) => {
  const input = h('input', { id, name: id, value: value === null || value === undefined ? '' : String(value) });
  return { input, row: [h('label', { for: id }, label), input] };
};

/**
 * @param {Job} job
 * @param {{ saved: (job: Job) => void, cancel: () => void }} then
 */
export function jobEditForm(job, { saved, cancel }) {
  const queue = labelled('edit-queue', 'Queue', job.Queue);
  const start = labelled('edit-start', 'Requested start', job.RequestedStartTime);
  const priority = labelled('edit-priority', 'Priority', job.Priority);
  const description = labelled('edit-description', 'Description', job.Description);
  const ins = (job.JobParameters ?? []).filter((p) => p.Direction !== 'Out');
  const params = ins.map((p) => ({ p, ...labelled(`edit-p-${p.Name}`, p.Name, paramValue(p, 'In')) }));
  const error = h('p', { class: 'error', role: 'alert', id: 'edit-error' });
  const save = h('button', { type: 'submit', id: 'edit-save' }, 'Save changes');
  const close = h('button', { type: 'button', id: 'edit-cancel', onclick: () => cancel() }, 'Cancel');
  const form = h(
    'form',
    { class: 'param-form', id: 'job-edit', novalidate: true },
    h(
      'div',
      { class: 'fields' },
      queue.row,
      start.row,
      priority.row,
      description.row,
      params.map((x) => x.row),
    ),
    h('div', {}, save, ' ', close),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    /** @type {Record<string, unknown>} */
    const body = {};
    const changed = (/** @type {HTMLInputElement} */ input) => input.value !== input.defaultValue;
    if (changed(queue.input)) body.Queue = queue.input.value.trim();
    if (changed(start.input)) body.RequestedStartTime = start.input.value.trim();
    if (changed(priority.input)) {
      const v = priority.input.value.trim();
      body.Priority = /^\d+$/.test(v) ? Number(v) : v; // anything else goes as given: the server names the field
    }
    if (changed(description.input)) body.Description = description.input.value.trim() || null;
    const items = params.filter((x) => changed(x.input)).map((x) => ({ Name: x.p.Name, InValueString: x.input.value }));
    if (items.length > 0) body.JobParameters = items;
    if (Object.keys(body).length === 0) {
      error.textContent = 'Nothing was changed.';
      return;
    }
    save.disabled = true;
    try {
      /** @type {Job} */
      const result = await api('PATCH', `/Job/${job.jobId}`, body);
      saved(result);
    } catch (err) {
      error.textContent = errorText(err);
    } finally {
      save.disabled = false;
    }
  });
  return form;
}
