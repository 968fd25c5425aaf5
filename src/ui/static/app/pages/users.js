/**
 * Users & keys, for administrators: the users with their roles, a form to add one, and the API keys of the user
 * chosen (`{base}/User`, `/Role`, `/User/<name>/apikeys`). A key made here is shown once, in this page only.
 */
import { api } from '../api.js';
import { fieldValue, fill, h, notice } from '../dom.js';
import { confirmAction } from '../confirm.js';
import { errorText, text } from '../format.js';
/** @import { ApiKeyItem, NewApiKey, Page, RoleItem, UserAccount } from '../api-types.js' */

/**
 * @typedef {object} Board
 * @property {HTMLTableSectionElement} users
 * @property {HTMLElement} keys  the chosen user's keys
 * @property {HTMLParagraphElement} error
 * @property {string[]} roles  every role's name
 * @property {string | null} chosen  the user whose keys are shown
 */

/** @param {HTMLElement} main */
export async function renderUsers(main) {
  /** @type {Board} */
  const board = {
    users: h('tbody', { id: 'users' }),
    keys: h('section', { id: 'keys' }),
    error: h('p', { class: 'error' }),
    roles: [],
    chosen: null,
  };
  fill(main, h('h1', {}, 'Users & keys'), board.error);
  try {
    /** @type {Page<RoleItem>} */
    const roles = await api('GET', '/Role?Limit=1000');
    board.roles = roles.items.map((r) => r.Name);
  } catch (err) {
    board.error.textContent = errorText(err);
    return;
  }
  main.append(
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, headings(['User', 'Roles', 'Password', 'State', 'Created', '']))),
      board.users,
    ),
    h('h2', {}, 'New user'),
    newUserForm(board),
    board.keys,
  );
  await refreshUsers(board);
}

/** @param {string[]} names */
const headings = (names) => names.map((n) => h('th', {}, n));

/** @param {Board} board */
async function refreshUsers(board) {
  try {
    /** @type {Page<UserAccount>} */
    const page = await api('GET', '/User?Limit=1000');
    board.error.textContent = '';
    fill(
      board.users,
      page.items.map((u) => userRow(board, u)),
    );
  } catch (err) {
    board.error.textContent = errorText(err);
  }
}

/**
 * @param {Board} board
 * @param {UserAccount} u
 */
function userRow(board, u) {
  const path = `/User/${encodeURIComponent(u.Name)}`;
  const toggle = h('button', { type: 'button' }, u.Disabled ? 'Enable' : 'Disable');
  toggle.addEventListener('click', () =>
    act(board, `${u.Name} ${u.Disabled ? 'enabled' : 'disabled'}`, () => api('PUT', path, { Disabled: !u.Disabled })),
  );
  const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
  remove.addEventListener('click', async () => {
    if (!(await confirmAction(`Delete user ${u.Name} with its keys?`, 'Delete user'))) return;
    if (board.chosen === u.Name) {
      board.chosen = null;
      board.keys.replaceChildren();
    }
    await act(board, `${u.Name} deleted`, () => api('DELETE', path));
  });
  const keys = h('button', { type: 'button' }, 'Keys');
  keys.addEventListener('click', () => showKeys(board, u.Name));
  return h(
    'tr',
    { 'data-user': u.Name },
    h('td', {}, u.Name),
    h('td', {}, text(u.Roles.join(', '))),
    h('td', {}, u.PasswordSet ? 'set' : '—'),
    h('td', {}, u.Disabled ? 'disabled' : 'enabled'),
    h('td', {}, u.CreationTime),
    h('td', {}, keys, ' ', toggle, ' ', remove),
  );
}

/**
 * Runs a change, says how it went, and re-reads the users.
 * @param {Board} board
 * @param {string} label
 * @param {() => Promise<unknown>} fn
 */
async function act(board, label, fn) {
  try {
    await fn();
    notice(label);
  } catch (err) {
    notice(errorText(err), 'error');
  }
  await refreshUsers(board);
}

/** @param {Board} board */
function newUserForm(board) {
  const roleBoxes = board.roles.map((r) =>
    h('label', {}, h('input', { type: 'checkbox', name: 'role', value: r }), ` ${r}`),
  );
  const form = h(
    'form',
    { id: 'new-user', class: 'filters' },
    h('label', {}, 'Name ', h('input', { name: 'name', required: true, autocomplete: 'off' })),
    h('label', {}, 'Password ', h('input', { name: 'password', type: 'password', autocomplete: 'new-password' })),
    roleBoxes,
    h('button', { type: 'submit' }, 'Create user'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const name = fieldValue(form, 'name');
    const password = fieldValue(form, 'password');
    const roles = [...form.querySelectorAll('input[name=role]')]
      .filter((el) => el instanceof HTMLInputElement && el.checked)
      .map((el) => (el instanceof HTMLInputElement ? el.value : ''));
    await act(board, `user ${name} created`, async () => {
      await api('POST', `/User/${encodeURIComponent(name)}`, {
        Roles: roles,
        ...(password ? { Password: password } : {}),
      });
      form.reset();
    });
  });
  return form;
}

/**
 * The keys of one user, with a form to make one; `made` is a key just made, shown this once.
 * @param {Board} board
 * @param {string} user
 * @param {NewApiKey} [made]
 */
async function showKeys(board, user, made) {
  board.chosen = user;
  const path = `/User/${encodeURIComponent(user)}/apikeys`;
  /** @type {Page<ApiKeyItem>} */
  let page;
  try {
    page = await api('GET', path);
  } catch (err) {
    fill(board.keys, h('p', { class: 'error' }, errorText(err)));
    return;
  }
  const rows = page.items.map((k) => {
    const revoke = h('button', { type: 'button', class: 'danger' }, 'Revoke');
    revoke.addEventListener('click', async () => {
      if (!(await confirmAction(`Revoke key ${k.Id} of ${user}?`, 'Revoke key'))) return;
      try {
        await api('DELETE', `${path}/${encodeURIComponent(k.Id)}`);
        notice(`key ${k.Id} revoked`);
      } catch (err) {
        notice(errorText(err), 'error');
      }
      await showKeys(board, user);
    });
    return h(
      'tr',
      { 'data-key': k.Id },
      h('td', {}, k.Id),
      h('td', {}, text(k.Description)),
      h('td', {}, k.Created),
      h('td', {}, k.Expires),
      h('td', {}, text(k.LastUsed)),
      h('td', {}, revoke),
    );
  });
  fill(
    board.keys,
    h('h2', {}, `API keys of ${user}`),
    made
      ? h(
          'div',
          { id: 'new-key' },
          h('p', {}, 'Copy this key now: it is not shown again. Expires ', made.Expires, '.'),
          h('pre', {}, h('code', { id: 'new-key-value' }, made.Key)),
        )
      : null,
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, headings(['Id', 'Description', 'Created', 'Expires', 'Last used', '']))),
      h('tbody', { id: 'key-rows' }, rows),
    ),
    newKeyForm(board, user, path),
  );
}

/**
 * @param {Board} board
 * @param {string} user
 * @param {string} path
 */
function newKeyForm(board, user, path) {
  const form = h(
    'form',
    { id: 'new-key-form', class: 'filters' },
    h('label', {}, 'Description ', h('input', { name: 'description', maxlength: 200 })),
    h('label', {}, 'Expires in days ', h('input', { name: 'days', type: 'number', min: 1, value: 90 })),
    h('button', { type: 'submit' }, 'Make key'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const days = Number(fieldValue(form, 'days'));
    try {
      /** @type {NewApiKey} */
      const made = await api('POST', path, {
        Description: fieldValue(form, 'description'),
        ...(days > 0 ? { ExpiresInDays: days } : {}),
      });
      await showKeys(board, user, made);
    } catch (err) {
      notice(errorText(err), 'error');
    }
  });
  return form;
}
