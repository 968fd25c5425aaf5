/**
 * The job list's multi-select and its bulk actions (`POST {base}/Job/bulk/<action>`, docs/architecture.md §6): a
 * checkbox per row, one for the page, and a bar naming how many are selected with the actions of the server's table
 * (those taking no submit form). Applying one asks the server first with a dry run, shows how many jobs it would act
 * on and how many it would skip, and acts only once that is confirmed; the server judges each job alone.
 */
import { api } from './api.js';
import { confirmAction } from './confirm.js';
import { h, notice } from './dom.js';
import { errorText } from './format.js';
import { actionButtonSpecs } from './session.js';
/** @import { ActionButton, BulkAnswer, Job } from './api-types.js' */

/**
 * The selection of one job list: its bar, its header cell and a cell per row; `done()` after an action was done.
 * @param {() => void} done
 */
export function bulkSelection(done) {
  /** @type {Set<number>} */
  const selected = new Set();
  /** @type {Map<number, HTMLInputElement>} */
  const boxes = new Map();
  const actions = actionButtonSpecs().filter((a) => a.body !== 'submit');
  const count = h('span', { id: 'bulk-count', class: 'muted' });
  const choice = h(
    'select',
    { id: 'bulk-action', 'aria-label': 'Bulk action' },
    actions.map((a) => h('option', { value: a.name }, a.label)),
  );
  const comment = h('input', { id: 'bulk-comment', placeholder: 'Comment (optional)', 'aria-label': 'Comment' });
  const apply = h('button', { type: 'button', id: 'bulk-apply' }, 'Apply to selected…');
  const all = h('input', { type: 'checkbox', id: 'select-all', 'aria-label': 'Select every job of this page' });
  const bar = h('div', { class: 'bulk actions', id: 'bulk-bar' }, count, choice, comment, apply);

  const shown = () => {
    count.textContent = `${selected.size} selected`;
    apply.disabled = selected.size === 0 || actions.length === 0;
    all.checked = boxes.size > 0 && [...boxes.keys()].every((id) => selected.has(id));
  };
  all.addEventListener('change', () => {
    for (const [id, box] of boxes) {
      box.checked = all.checked;
      if (all.checked) selected.add(id);
      else selected.delete(id);
    }
    shown();
  });
  apply.addEventListener('click', () => {
    const action = actions.find((a) => a.name === choice.value);
    if (action) void run(action, [...selected], comment.value.trim(), apply, () => clear(), done);
  });
  /** Forgets the selection (another page of the list, or an action done). */
  const clear = () => {
    selected.clear();
    for (const box of boxes.values()) box.checked = false;
    shown();
  };
  shown();
  return {
    bar,
    clear,
    head: () => h('th', {}, all),
    /** The rows of a page are about to be drawn again: their boxes are made anew. */
    redraw: () => boxes.clear(),
    /** @param {Job} job */
    cell: (job) => {
      const box = h('input', {
        type: 'checkbox',
        class: 'pick',
        'data-job': job.jobId,
        'aria-label': `Select job ${job.jobId}`,
        checked: selected.has(job.jobId),
      });
      box.addEventListener('change', () => {
        if (box.checked) selected.add(job.jobId);
        else selected.delete(job.jobId);
        shown();
      });
      boxes.set(job.jobId, box);
      queueMicrotask(shown);
      return h('td', {}, box);
    },
  };
}

/**
 * A dry run first: how many of the selected jobs the action would act on. Asks to confirm, then acts.
 * @param {ActionButton} action
 * @param {number[]} ids
 * @param {string} comment
 * @param {HTMLButtonElement} button
 * @param {() => void} clear
 * @param {() => void} done
 */
async function run(action, ids, comment, button, clear, done) {
  const body = { JobIds: ids, ...(comment ? { Comment: comment } : {}) };
  button.disabled = true;
  try {
    /** @type {BulkAnswer} */
    const trial = await api('POST', `/Job/bulk/${action.name}`, { ...body, DryRun: true });
    if (trial.Done === 0) {
      notice(`${action.label}: none of the ${trial.Matched} selected jobs. ${reasons(trial)}`, 'error');
      return;
    }
    const skipped = trial.Skipped.length ? ` ${trial.Skipped.length} would be skipped. ${reasons(trial)}` : '';
    const question = `${action.label} ${trial.Done} of ${trial.Matched} selected jobs?${skipped}`;
    if (!(await confirmAction(question, action.label, () => button.isConnected))) return;
    /** @type {BulkAnswer} */
    const answer = await api('POST', `/Job/bulk/${action.name}`, body);
    const text = `${action.label}: ${answer.Done} done, ${answer.Skipped.length} skipped.`;
    notice(answer.Skipped.length ? `${text} ${reasons(answer)}` : text, answer.Skipped.length ? 'error' : 'info');
    clear();
    done();
  } catch (err) {
    notice(errorText(err), 'error');
  } finally {
    button.disabled = false;
  }
}

/**
 * The first reasons of skipped jobs, in the server's words.
 * @param {BulkAnswer} answer
 */
function reasons(answer) {
  const first = answer.Skipped.slice(0, 3).map((s) => s.Reason);
  const more = answer.Skipped.length - first.length;
  return first.join('; ') + (more > 0 ? ` (and ${more} more)` : '');
}
