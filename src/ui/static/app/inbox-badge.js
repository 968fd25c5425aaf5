/** The count of approvals and operator messages waiting, beside "Inbox"; re-counted when the feed reports one. */
import { api } from './api.js';
import { onFeed } from './feed.js';
/** @import { Page } from './api-types.js' */

const LIMIT = 100;

/** @param {string} path */
async function count(path) {
  try {
    /** @type {Page<unknown>} */
    const page = await api('GET', `${path}&Limit=${LIMIT}&fields=uniqueId`);
    return page.items.length;
  } catch {
    return 0;
  }
}

/**
 * @param {HTMLElement} el
 * @returns {() => void} stops it
 */
export function startInboxBadge(el) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const refresh = async () => {
    timer = undefined;
    const n =
      (await count('/UserMessage?ReplyStatus=Required')) + (await count('/OperatorMessage?ReplyStatus=Required'));
    el.textContent = n >= LIMIT ? `${LIMIT}+` : String(n);
    el.hidden = n === 0;
  };
  const unsubscribe = onFeed((batch, resync) => {
    if (!timer && (resync || batch.some((ev) => /message|alert/i.test(ev.type)))) timer = setTimeout(refresh, 1000);
  });
  const poll = setInterval(refresh, 30_000);
  void refresh();
  return () => {
    unsubscribe();
    clearInterval(poll);
    clearTimeout(timer);
  };
}
