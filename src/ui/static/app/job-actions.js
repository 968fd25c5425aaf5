/**
 * The action buttons of a job: only those that apply in its status (the engine's table) and that the user holds
 * the privilege for; kill and cancel ask first. Resubmit opens a form with the job's parameters to edit.
 */
import { api } from './api.js';
import { confirmAction } from './confirm.js';
import { h, notice } from './dom.js';
import { navigate } from './router.js';
import { actionApplies, can, partitionOf } from './session.js';

const ACTIONS = [
  ['hold', 'Hold'],
  ['release', 'Release'],
  ['runnow', 'Run now'],
  ['cancel', 'Cancel'],
  ['kill', 'Kill'],
  ['restart', 'Restart'],
  ['resubmit', 'Resubmit…'],
];
const DANGEROUS = { kill: 'Kill', cancel: 'Cancel' };

/** The buttons for `job`; `changed(newJob)` after an action, `resubmit()` to open the resubmit form. */
export function actionButtons(job, { changed, resubmit }) {
  const partition = partitionOf(job.JobDefinition);
  const control = can('Job', partition, 'Control');
  const submit = can('JobDefinition', partition, 'Submit');
  const buttons = [];
  for (const [action, label] of ACTIONS) {
    if (!control || !actionApplies(action, job.Status)) continue;
    if ((action === 'restart' || action === 'resubmit') && !submit) continue;
    const button = h(
      'button',
      { type: 'button', 'data-action': action, class: DANGEROUS[action] ? 'danger' : '' },
      label,
    );
    button.addEventListener('click', async () => {
      if (action === 'resubmit') return resubmit();
      if (DANGEROUS[action] && !(await confirmAction(`${label} job ${job.jobId} (${job.JobDefinition})?`, label)))
        return;
      button.disabled = true;
      try {
        const result = await api('PUT', `/Job/${job.jobId}/${action}`);
        if (action === 'restart' && result?.jobId !== job.jobId) {
          notice(`Restarted as job ${result.jobId}`);
          navigate(`/job/${result.jobId}`);
        } else changed(result);
      } catch (err) {
        notice(err.message, 'error');
        button.disabled = false;
      }
    });
    buttons.push(button);
  }
  return h(
    'div',
    { class: 'actions', id: 'job-actions' },
    buttons.length ? buttons : h('span', { class: 'muted' }, 'No action applies.'),
  );
}
