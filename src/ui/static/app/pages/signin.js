/** The sign-in form: the same user names and passwords as basic auth. */
import { ApiError, uiApi } from '../api.js';
import { fill, h } from '../dom.js';
import { errorText } from '../format.js';
/** @import { Session } from '../api-types.js' */

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
  const form = h(
    'form',
    { class: 'signin card', id: 'signin' },
    h('h1', {}, 'Millrace'),
    h('label', { for: 'user' }, 'User name'),
    user,
    h('label', { for: 'password' }, 'Password'),
    password,
    h('button', { type: 'submit' }, 'Sign in'),
    error,
  );
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
}
