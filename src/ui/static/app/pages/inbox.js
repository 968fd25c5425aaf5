/**
 * What waits for the signed-in user: operator messages needing a reply, user messages (approvals) they may
 * answer (or forward, or delegate), and unacknowledged alerts; each answered here; and the latest answered operator
 * messages, to delete (message-actions.js). Re-read when the feed reports a message or alert.
 */
import { api, withQuery } from '../api.js';
import { fill, h, notice } from '../dom.js';
import { onFeed } from '../feed.js';
import { errorText, text } from '../format.js';
import { answeredCard, handOverControls, handOverNotes } from '../message-actions.js';
import { session } from '../session.js';
/** @import { Alert, OperatorMessage, Page, UserMessage } from '../api-types.js' */

/**
 * A list's items, or why it could not be read.
 * @template T
 * @typedef {{ items: T[], error?: string }} Listed
 */

/** @param {string} type */
const mayReply = (type) =>
  session()?.grants.some((g) => (g.type === '*' || g.type === type) && g.privileges.includes('Reply')) ?? false;

/**
 * @template [T=unknown]
 * @param {string} path
 * @param {Record<string, string>} query
 * @returns {Promise<Listed<T>>}
 */
async function list(path, query) {
  try {
    /** @type {Page<T>} */
    const page = await api('GET', withQuery(path, { Limit: 100, ...query }));
    return { items: page.items ?? [] };
  } catch (err) {
    return { items: [], error: errorText(err) };
  }
}

/**
 * Answers a message or alert, says so, and calls `done` (which re-reads the inbox); a refusal is shown.
 * @param {'OperatorMessage' | 'UserMessage' | 'Alert'} kind
 * @param {number} id
 * @param {Record<string, string>} body
 * @param {() => void} done
 */
function replyTo(kind, id, body, done) {
  return api('PUT', `/${kind}/${id}/reply`, body).then(
    () => {
      notice(`${kind} ${id} answered`);
      done();
    },
    (/** @type {unknown} */ err) => notice(errorText(err), 'error'),
  );
}

/**
 * @param {OperatorMessage} m
 * @param {() => void} done
 */
function operatorCard(m, done) {
  const input = h('input', {
    name: 'reply',
    placeholder: m.ReplyExpression ? `matching ${m.ReplyExpression}` : 'reply',
    'aria-label': 'Reply',
  });
  const form = h('form', { class: 'reply' }, input, h('button', { type: 'submit' }, 'Reply'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void replyTo('OperatorMessage', m.uniqueId, { Reply: input.value }, done);
  });
  return h(
    'article',
    { class: 'card message', 'data-message': m.uniqueId },
    h('p', { class: 'text' }, text(m.FullText)),
    h('p', { class: 'muted small' }, `${text(m.SenderObject)} · ${text(m.CreationTime)}`),
    mayReply('OperatorMessage') ? form : null,
  );
}

/**
 * @param {UserMessage} m
 * @param {() => void} done
 */
function userCard(m, done) {
  const comment = h('input', { name: 'comment', placeholder: 'comment (optional)', 'aria-label': 'Comment' });
  const buttons = (m.Responses ?? []).map((r) =>
    h(
      'button',
      {
        type: 'button',
        'data-response': r.Response,
        onclick: () =>
          void replyTo(
            'UserMessage',
            m.uniqueId,
            { Response: r.Response, ...(comment.value.trim() ? { ReplyComment: comment.value.trim() } : {}) },
            done,
          ),
      },
      r.Response,
    ),
  );
  return h(
    'article',
    { class: 'card message', 'data-message': m.uniqueId },
    h('p', { class: 'text' }, text(m.Text)),
    h(
      'p',
      { class: 'muted small' },
      'Job ',
      m.Job ? h('a', { href: `#/job/${m.Job}` }, String(m.Job)) : '—',
      ` · ${text(m.CreationTime)}`,
    ),
    handOverNotes(m),
    mayReply('UserMessage') ? h('div', { class: 'reply' }, comment, buttons) : null,
    mayReply('UserMessage') ? handOverControls(m, done) : null,
  );
}

/**
 * @param {Alert} a
 * @param {() => void} done
 */
function alertCard(a, done) {
  return h(
    'article',
    { class: 'card message', 'data-alert': a.uniqueId },
    h('p', { class: 'text' }, text(a.Message)),
    h('p', { class: 'muted small' }, `${text(a.Status)} · ${text(a.SourceObject)} · ${text(a.CreationTime)}`),
    mayReply('Alert')
      ? h(
          'button',
          { type: 'button', onclick: () => void replyTo('Alert', a.uniqueId, { Response: 'Acknowledge' }, done) },
          'Acknowledge',
        )
      : null,
  );
}

/** @param {HTMLElement} main */
export function renderInbox(main) {
  const operator = h('div', { id: 'inbox-operator' });
  const user = h('div', { id: 'inbox-user' });
  const alerts = h('div', { id: 'inbox-alerts' });
  const answered = h('div', { id: 'inbox-answered' });
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;

  /**
   * @template T
   * @param {HTMLElement} el
   * @param {Listed<T>} res
   * @param {(item: T, done: () => void) => HTMLElement} card
   * @param {string} empty  what is said when nothing waits
   */
  const section = (el, res, card, empty) =>
    fill(
      el,
      res.error
        ? h('p', { class: 'error' }, res.error)
        : res.items.length
          ? res.items.map((m) => card(m, load))
          : h('p', { class: 'muted' }, empty),
    );

  async function load() {
    timer = undefined;
    /** @type {Promise<Listed<OperatorMessage>>} */
    const operatorMessages = list('/OperatorMessage', { ReplyStatus: 'Required' });
    /** @type {Promise<Listed<UserMessage>>} */
    const userMessages = list('/UserMessage', { ReplyStatus: 'Required' });
    /** @type {Promise<Listed<Alert>>} */
    const waitingAlerts = list('/Alert', { Status: 'NotAcknowledged,Escalated' });
    /** @type {Promise<Listed<OperatorMessage>>} */
    const answeredMessages = list('/OperatorMessage', { ReplyStatus: 'Replied,NotRequired', Limit: '20' });
    const [o, u, a, done] = await Promise.all([operatorMessages, userMessages, waitingAlerts, answeredMessages]);
    u.items = u.items.filter((m) => m.Status === 'ManualTask' || m.Response === null);
    section(operator, o, operatorCard, 'No operator message waits for a reply.');
    section(user, u, userCard, 'No approval waits for you.');
    section(alerts, a, alertCard, 'No alert waits for an acknowledgement.');
    section(answered, done, answeredCard, 'No answered operator message.');
  }

  fill(
    main,
    h('h1', {}, 'Inbox'),
    h('section', {}, h('h2', {}, 'Approvals'), user),
    h('section', {}, h('h2', {}, 'Operator messages'), operator),
    h('section', {}, h('h2', {}, 'Alerts'), alerts),
    h('section', {}, h('h2', {}, 'Answered operator messages'), answered),
  );
  const unsubscribe = onFeed((batch, resync) => {
    if (resync || batch.some((ev) => /message|alert/i.test(ev.type))) {
      clearTimeout(timer);
      timer = setTimeout(load, 200);
    }
  });
  const poll = setInterval(load, 10_000);
  void load();
  return () => {
    unsubscribe();
    clearInterval(poll);
    clearTimeout(timer);
  };
}
