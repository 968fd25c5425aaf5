/**
 * An in-page confirmation (a <dialog>, not window.confirm): answers true when the person confirms. However the
 * dialog closes (its buttons, Escape, a navigation: dom.js closeDialogs, or the page changing so that what it asks
 * about is no longer shown), it is removed, and only "yes" confirms.
 */
import { h, showDialog } from './dom.js';

/**
 * @param {string} question
 * @param {string} yesLabel
 * @param {() => boolean} [stillAsked]  looked at whenever the page changes: once false, the question is gone
 * @returns {Promise<boolean>}
 */
export function confirmAction(question, yesLabel, stillAsked) {
  const yes = h('button', { type: 'button', class: 'danger', id: 'confirm-yes' }, yesLabel);
  const no = h('button', { type: 'button', id: 'confirm-no' }, 'Keep it');
  const dialog = h('dialog', { class: 'confirm', id: 'confirm' }, h('p', {}, question), h('div', {}, yes, ' ', no));
  let answer = false;
  const answered = (/** @type {boolean} */ value) => {
    answer = value;
    dialog.close();
  };
  yes.addEventListener('click', () => answered(true));
  no.addEventListener('click', () => answered(false));
  // A question about what the page no longer offers (the job's status changed under it) is not asked any more.
  const gone = new MutationObserver(() => {
    if (stillAsked && !stillAsked()) dialog.close();
  });
  if (stillAsked) gone.observe(document.body, { childList: true, subtree: true });
  return showDialog(
    dialog,
    no,
    () => answer,
    () => gone.disconnect(),
  );
}
