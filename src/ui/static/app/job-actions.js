/**
 * The action buttons of a job, from the server's action table (sent with the session): only those that apply in its
 * status and whose privileges the user holds; those marked `confirm` ask first. An action whose body is a submit body
 * (resubmit) opens a form with the job's parameters to edit; one whose body is a comment (Mark completed) asks why;
 * one that creates a job goes to the new job. "Edit" (PATCH /Job/<id>) is offered while the job has not started.
 */
import { api } from './api.js';
import { askComment } from './comment-dialog.js';
import { confirmAction } from './confirm.js';
import { h, notice } from './dom.js';
import { errorText } from './format.js';
import { navigate } from './router.js';
import { actionApplies, actionButtonSpecs, can, modifiable, partitionOf } from './session.js';
/** @import { Job } from './api-types.js' */

/**
 * Whether the page still offers `action` (drawn again after the job changed, its button may be gone).
 * @param {string} action
 */
const offered = (action) => document.querySelector(`#job-actions [data-action="${action}"]`) !== null;

/**
 * The buttons for `job`; `changed(newJob)` after an action, `resubmit()` to open the resubmit form, `edit()` the
 * form that changes a job before it starts.
 * @param {Job} job
 * @param {{ changed: (job: Job) => void, resubmit: () => void, edit?: () => void }} then
 */
export function actionButtons(job, { changed, resubmit, edit }) {
  const partition = partitionOf(job.JobDefinition);
  const buttons = [];
  for (const { name: action, label, confirm, privileges, body, creates } of actionButtonSpecs()) {
    if (!actionApplies(action, job.Status)) continue;
    if (!privileges.every((p) => can(p.type, partition, p.privilege))) continue;
    const button = h('button', { type: 'button', 'data-action': action, class: confirm ? 'danger' : '' }, label);
    button.addEventListener('click', async () => {
      if (body === 'submit') return resubmit();
      if (
        confirm &&
        !(await confirmAction(`${label} job ${job.jobId} (${job.JobDefinition})?`, label, () => offered(action)))
      )
        return;
      const comment =
        body === 'comment' ? await askComment(`${label} job ${job.jobId} (${job.JobDefinition})?`, label) : null;
      if (body === 'comment' && comment === null) return;
      button.disabled = true;
      try {
        /** @type {Job} */
        const result = await api(
          'PUT',
          `/Job/${job.jobId}/${action}`,
          comment === null ? undefined : { Comment: comment },
        );
        if (creates && result?.jobId !== job.jobId) {
          notice(`Restarted as job ${result.jobId}`);
          navigate(`/job/${result.jobId}`);
        } else changed(result);
      } catch (err) {
        notice(errorText(err), 'error');
        button.disabled = false;
      }
    });
    buttons.push(button);
  }
  if (edit && modifiable(job.Status) && can('Job', partition, 'Control'))
    buttons.push(h('button', { type: 'button', 'data-action': 'edit', onclick: () => edit() }, 'Edit'));
  return h(
    'div',
    { class: 'actions', id: 'job-actions' },
    buttons.length ? buttons : h('span', { class: 'muted' }, 'No action applies.'),
  );
}
