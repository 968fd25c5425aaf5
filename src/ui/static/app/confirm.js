/**
 * An in-page confirmation (a <dialog>, not window.confirm): answers true when the person confirms. However the
 * dialog closes (its buttons, Escape, or a navigation: dom.js closeDialogs), it is removed, and only "yes" confirms.
 */
import { h } from './dom.js';

/**
 * @param {string} question
 * @param {string} yesLabel
 * @returns {Promise<boolean>}
 */
export function confirmAction(question, yesLabel) {
  return new Promise((resolve) => {
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
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    no.focus();
  });
}
