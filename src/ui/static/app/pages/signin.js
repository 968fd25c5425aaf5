/** The sign-in form: the same user names and passwords as basic auth, and the identity provider's sign-in. */
import { ApiError, uiApi } from '../api.js';
import { fill, h } from '../dom.js';
import { errorText } from '../format.js';
/** @import { Session, SignInOptions } from '../api-types.js' */

/** What a refused sign-in through the identity provider means (`?sso=<reason>` from the server's callback). */
const SSO_REFUSALS = /** @type {Record<string, string>} */ ({
  'unknown-user': 'Your account is not known to Millrace; ask an administrator to create it.',
  'no-role': 'The identity provider grants you no Millrace role.',
  disabled: 'Your account is disabled.',
  failed: 'Sign-in with the identity provider failed; try again.',
  unavailable: 'The identity provider cannot be reached; try again later.',
});

/**
 * @param {HTMLElement} main
 * @param {(session: Session) => void} signedIn
 */
export function renderSignIn(main, signedIn) {
  const error = h('p', { class: 'error', role: 'alert', id: 'signin-error' });
  const user = h('input', { name: 'user', id: 'user', autocomplete: 'username', required: true });
  const password = h('input', {
    name: 'password',
    id: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const passwordPart = h(
    'div',
    { class: 'signin-passwords' },
    h('label', { for: 'user' }, 'User name'),
    user,
    h('label', { for: 'password' }, 'Password'),
    password,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  const ssoPart = h('div', { class: 'signin-sso' });
  const form = h('form', { class: 'signin card', id: 'signin' }, h('h1', {}, 'Millrace'), passwordPart, ssoPart, error);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    try {
      signedIn(await uiApi('POST', 'api/session', { user: user.value, password: password.value }));
    } catch (err) {
      const status = err instanceof ApiError ? err.status : null;
      error.textContent = status === 401 ? 'Wrong user name or password.' : errorText(err);
      password.value = '';
    }
  });
  fill(main, form);
  user.focus();
  showSsoRefusal(error);
  void offerSso(passwordPart, ssoPart);
}

/**
 * The reason the server's callback gave (a fixed word, worded here), then removed from the address bar.
 * @param {HTMLElement} error
 */
function showSsoRefusal(error) {
  const params = new URLSearchParams(location.search);
  const reason = params.get('sso');
  if (reason === null) return;
  error.textContent = (Object.hasOwn(SSO_REFUSALS, reason) ? SSO_REFUSALS[reason] : SSO_REFUSALS.failed) ?? '';
  history.replaceState(null, '', location.pathname + location.hash);
}

/**
 * Adds "Sign in with <issuer>" when single sign-on is configured, and hides the password fields when passwords are
 * refused.
 * @param {HTMLElement} passwordPart
 * @param {HTMLElement} ssoPart
 */
async function offerSso(passwordPart, ssoPart) {
  /** @type {SignInOptions} */
  const options = await uiApi('GET', 'api/signin-options');
  if (!options.passwords) passwordPart.remove();
  if (options.sso)
    fill(
      ssoPart,
      h('a', { class: 'button', id: 'sso-signin', href: options.sso.url }, `Sign in with ${options.sso.label}`),
    );
}
