/** Start-up: ask who is signed in, then show the page the address names (or the sign-in form). */
import { configureApi, uiApi } from './api.js';
import { h } from './dom.js';
import { onFeedState, startFeed, stopFeed } from './feed.js';
import { startInboxBadge } from './inbox-badge.js';
import { renderAudit } from './pages/audit.js';
import { renderDeadlines } from './pages/deadlines.js';
import { renderNewObject, renderObject } from './pages/definition-edit.js';
import { renderDefinition, renderDefinitions } from './pages/definitions.js';
import { renderForecast } from './pages/forecast.js';
import { renderInbox } from './pages/inbox.js';
import { renderInfra } from './pages/infra.js';
import { renderJob } from './pages/job.js';
import { renderJobs } from './pages/jobs.js';
import { renderSignIn } from './pages/signin.js';
import { renderTimeWindow } from './pages/time-window.js';
import { renderUsers } from './pages/users.js';
import { renderEventDefinition } from './pages/event-definition.js';
import { leave, route, show } from './router.js';
import { setSession } from './session.js';
/** @import { Session } from './api-types.js' */

/**
 * An element of index.html, which the console cannot run without.
 * @param {string} id
 */
function pageElement(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html has no #${id}`);
  return el;
}

const main = pageElement('main');
const top = pageElement('top');

route('/jobs', renderJobs);
route('/job/:id', renderJob);
route('/inbox', renderInbox);
route('/definitions', renderDefinitions);
route('/definition/:key', renderDefinition);
route('/object/:type/:key', renderObject);
route('/new/:type', renderNewObject);
route('/infra', renderInfra);
route('/forecast', renderForecast);
route('/deadlines', renderDeadlines);
route('/audit', renderAudit);
route('/timewindow/:key', renderTimeWindow);
route('/eventdefinition/:key', renderEventDefinition);
route('/users', renderUsers);

/** @type {(() => void) | null} */
let stopBadge = null;

function signedOut() {
  leave();
  stopBadge?.();
  stopBadge = null;
  setSession(null);
  stopFeed();
  top.hidden = true;
  // A late 401 of the page just left changes nothing: the form shown keeps what is typed and its message.
  if (!document.getElementById('signin')) renderSignIn(main, signedIn);
}

/** @param {Session} session */
function signedIn(session) {
  setSession(session);
  configureApi(session, signedOut);
  top.hidden = false;
  // Only administrators manage users and keys (the server refuses anyone else); others are not offered the page.
  pageElement('nav-users').hidden = !session.roles.includes('Administrator');
  pageElement('who').replaceChildren(h('span', { class: 'muted' }, 'Signed in as '), session.user);
  startFeed();
  stopBadge?.();
  stopBadge = startInboxBadge(pageElement('inbox-count'));
  void show(main);
}

pageElement('sign-out').addEventListener('click', async () => {
  try {
    await uiApi('DELETE', 'api/session');
  } finally {
    location.hash = '#/jobs';
    signedOut();
  }
});
onFeedState((open) => {
  const el = pageElement('feed-state');
  el.textContent = open ? 'live' : 'offline';
  el.classList.toggle('on', open);
});
window.addEventListener('hashchange', () => {
  if (!top.hidden) void show(main);
});

try {
  /** @type {Session} */
  const session = await uiApi('GET', 'api/session');
  signedIn(session);
} catch {
  signedOut();
}
