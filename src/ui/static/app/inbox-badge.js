/** The count of approvals and operator messages waiting, beside "Inbox"; re-counted when the feed reports one. */
import { api } from './api.js';
import { onFeed } from './feed.js';

const LIMIT = 100;

async function count(path) {
  try {
    return (await api('GET', `${path}&Limit=${LIMIT}&fields=uniqueId`)).items.length;
  } catch {
    return 0;
  }
}

export function startInboxBadge(el) {
  let timer = null;
  const refresh = async () => {
    timer = null;
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
