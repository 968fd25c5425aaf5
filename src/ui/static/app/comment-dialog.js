/**
 * Asks why, in a <dialog> like confirm.js: answers the comment, or null when the person cancels (its button,
 * Escape, or a navigation closing the dialog: dom.js closeDialogs). An empty comment is not accepted: the server
 * requires one for a status set by hand (docs/architecture.md §6).
 */
import { h, showDialog } from './dom.js';

/**
 * @param {string} question
 * @param {string} yesLabel
 * @returns {Promise<string | null>}
 */
export function askComment(question, yesLabel) {
  const input = h('textarea', { id: 'comment-text', rows: 3, maxlength: 1000, placeholder: 'Why?' });
  const problem = h('p', { class: 'error', role: 'alert', id: 'comment-error' });
  const yes = h('button', { type: 'button', id: 'comment-yes' }, yesLabel);
  const no = h('button', { type: 'button', id: 'comment-no' }, 'Cancel');
  const dialog = h(
    'dialog',
    { class: 'confirm', id: 'comment-dialog' },
    h('p', {}, question),
    h('label', { for: 'comment-text' }, 'Comment (kept in the job’s history)'),
    input,
    problem,
    h('div', {}, yes, ' ', no),
  );
  /** @type {string | null} */
  let answer = null;
  yes.addEventListener('click', () => {
    const text = input.value.trim();
    if (text === '') {
      problem.textContent = 'Say why: the comment is required.';
      input.focus();
      return;
    }
    answer = text;
    dialog.close();
  });
  no.addEventListener('click', () => dialog.close());
  return showDialog(dialog, input, () => answer);
}
