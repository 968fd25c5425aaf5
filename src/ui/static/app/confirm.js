/** An in-page confirmation (a <dialog>, not window.confirm): answers true when the person confirms. */
import { h } from './dom.js';

export function confirmAction(question, yesLabel) {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'button', class: 'danger', id: 'confirm-yes' }, yesLabel);
    const no = h('button', { type: 'button', id: 'confirm-no' }, 'Keep it');
    const dialog = h('dialog', { class: 'confirm', id: 'confirm' }, h('p', {}, question), h('div', {}, yes, ' ', no));
    const done = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    yes.addEventListener('click', () => done(true));
    no.addEventListener('click', () => done(false));
    dialog.addEventListener('cancel', () => done(false));
    document.body.appendChild(dialog);
    dialog.showModal();
    no.focus();
  });
}
