/**
 * What the inbox does with a message beside answering it: pass an approval on (forward it, or delegate it so that
 * others answer in your place) and delete an operator message once it is answered. The server checks everything
 * again (only a participant may pass a message on; deleting needs the Delete privilege); a refusal is shown as is.
 */
import { api } from './api.js';
import { confirmAction } from './confirm.js';
import { h, notice } from './dom.js';
import { errorText, text } from './format.js';
import { session } from './session.js';
/** @import { OperatorMessage, UserMessage } from './api-types.js' */

/**
 * Whether some grant of the signed-in user gives `privilege` on `type` (the server checks the partition).
 * @param {string} type
 * @param {string} privilege
 */
export const mayDo = (type, privilege) =>
  session()?.grants.some((g) => (g.type === '*' || g.type === type) && g.privileges.includes(privilege)) ?? false;

/**
 * The open forward forms by message id, with what was typed: the inbox is read again every few seconds and when the
 * feed tells of a message, and an open form must survive that.
 * @type {Map<number, { to: string, comment: string }>}
 */
const drafts = new Map();

/**
 * A "Forward…" button that opens a small form: who (users, or role:<name>, separated by commas), a comment, and
 * Forward (they become participants) or Delegate (they answer in your place).
 * @param {UserMessage} m
 * @param {() => void} done  re-reads the inbox
 */
export function handOverControls(m, done) {
  // Only a participant may pass a message on: a delegate (named in Delegates, not in Participants) is offered
  // nothing. Roles are not in the session, so a message naming any role offers it and the server decides.
  const user = session()?.user;
  if (!(m.Participants ?? []).some((p) => p === user || /^role:/i.test(p))) return null;
  const kept = drafts.get(m.uniqueId);
  const to = h('input', { name: 'to', placeholder: 'user, role:Name', 'aria-label': 'Forward to', value: kept?.to });
  const comment = h('input', {
    name: 'handover-comment',
    placeholder: 'why (optional)',
    'aria-label': 'Why',
    value: kept?.comment,
  });
  const keep = () => drafts.set(m.uniqueId, { to: to.value, comment: comment.value });
  to.addEventListener('input', keep);
  comment.addEventListener('input', keep);
  /** @param {'forward' | 'delegate'} kind */
  const send = (kind) => {
    const names = to.value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const body = { To: names, ...(comment.value.trim() ? { Comment: comment.value.trim() } : {}) };
    return api('PUT', `/UserMessage/${m.uniqueId}/${kind}`, body).then(
      () => {
        drafts.delete(m.uniqueId);
        notice(`UserMessage ${m.uniqueId} ${kind === 'forward' ? 'forwarded' : 'delegated'} to ${names.join(', ')}`);
        done();
      },
      (/** @type {unknown} */ err) => notice(errorText(err), 'error'),
    );
  };
  const form = h(
    'div',
    { class: 'reply handover', hidden: !kept },
    to,
    comment,
    h('button', { type: 'button', 'data-handover': 'forward', onclick: () => void send('forward') }, 'Forward'),
    h('button', { type: 'button', 'data-handover': 'delegate', onclick: () => void send('delegate') }, 'Delegate'),
  );
  const open = h(
    'button',
    {
      type: 'button',
      class: 'link',
      'data-open-handover': m.uniqueId,
      onclick: () => {
        form.hidden = !form.hidden;
        if (form.hidden) drafts.delete(m.uniqueId);
        else {
          keep();
          to.focus();
        }
      },
    },
    'Forward…',
  );
  return h('div', {}, open, form);
}

/**
 * Who passed the message on, and who may answer in whose place.
 * @param {UserMessage} m
 */
export function handOverNotes(m) {
  const lines = (m.History ?? []).map(
    (e) =>
      `${text(e.User)} ${e.Action === 'Delegate' ? 'delegated' : 'forwarded'} to ${(e.To ?? []).join(', ')}` +
      `${e.Comment ? `: ${e.Comment}` : ''} (${text(e.Time)})`,
  );
  return lines.length
    ? h(
        'ul',
        { class: 'muted small handover-history' },
        lines.map((l) => h('li', {}, l)),
      )
    : null;
}

/**
 * An answered (or no longer asked) operator message, with a Delete button for whoever may delete.
 * @param {OperatorMessage} m
 * @param {() => void} done  re-reads the inbox
 */
export function answeredCard(m, done) {
  const remove = async () => {
    if (!(await confirmAction(`Delete operator message ${m.uniqueId}?`, 'Delete'))) return;
    try {
      await api('DELETE', `/OperatorMessage/${m.uniqueId}`);
      notice(`OperatorMessage ${m.uniqueId} deleted`);
      done();
    } catch (err) {
      notice(errorText(err), 'error');
    }
  };
  return h(
    'article',
    { class: 'card message', 'data-message': m.uniqueId },
    h('p', { class: 'text' }, text(m.FullText)),
    h(
      'p',
      { class: 'muted small' },
      m.ReplyStatus === 'Replied'
        ? `${text(m.Reply)} · replied by ${text(m.ReplyUser)} · ${text(m.ReplyTime)}`
        : `no reply needed · ${text(m.SenderObject)} · ${text(m.CreationTime)}`,
    ),
    mayDo('OperatorMessage', 'Delete')
      ? h(
          'button',
          { type: 'button', class: 'danger', 'data-delete': m.uniqueId, onclick: () => void remove() },
          'Delete',
        )
      : null,
  );
}
