/**
 * Calls to the server. The JSON interface is reached at the base URL the session names, signed in by the
 * HttpOnly session cookie (the browser sends it); state-changing calls carry the session's CSRF token.
 */
/** @import { ErrorRecord, Session } from './api-types.js' */

/** @type {{ jsonBase: string, csrf: string, onSignedOut: () => void }} */
const state = { jsonBase: '', csrf: '', onSignedOut: () => {} };

/** An answer with an error status; `message` is the server's (its error record) or the status line. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * @param {Session} session
 * @param {() => void} [onSignedOut]  called on a 401 of the JSON interface
 */
export function configureApi(session, onSignedOut) {
  state.jsonBase = session.jsonBase;
  state.csrf = session.csrf;
  if (onSignedOut) state.onSignedOut = onSignedOut;
}

export const jsonBase = () => state.jsonBase;

/**
 * `query` values that are empty or undefined are left out.
 * @param {string} path
 * @param {Record<string, string | number | null | undefined>} [query]
 */
export function withQuery(path, query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * @param {string} url
 * @param {string} method
 * @param {unknown} body  sent as JSON unless undefined
 * @param {Record<string, string>} [headers]
 * @param {boolean} [notify]  whether a 401 signs the page out
 */
async function request(url, method, body, headers = {}, notify = true) {
  /** @type {Record<string, string>} */
  const h = { Accept: 'application/json', ...headers };
  if (method !== 'GET' && method !== 'HEAD') h['X-Millrace-CSRF'] = state.csrf;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers: h,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401 && notify) state.onSignedOut();
  return res;
}

/**
 * The answer's JSON, as the typedef the caller names (api-types.js): the one place where the console takes the
 * shape of what the server sends on trust (its routes are typed and tested on the server's side).
 * @template T
 * @param {Response} res
 * @returns {Promise<T>}
 */
async function parsed(res) {
  const text = await res.text();
  /** @type {unknown} */
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const error = /** @type {ErrorRecord | undefined} */ (json);
    throw new ApiError(res.status, error?.message ?? `${res.status} ${res.statusText}`);
  }
  return /** @type {T} */ (json);
}

/**
 * A call to the JSON interface: `api('GET', '/Job/12')`. The answer has the type (a typedef of api-types.js) of the
 * variable it is assigned to, declared with `@type`; otherwise it is `unknown`.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function api(method, path, body) {
  return parsed(await request(state.jsonBase + path, method, body));
}

/**
 * The raw response of a GET (or HEAD) on the JSON interface (job file sizes and ranges).
 * @param {string} path
 * @param {Record<string, string>} headers
 * @param {'GET' | 'HEAD'} [method]
 */
export function apiRaw(path, headers, method = 'GET') {
  return request(state.jsonBase + path, method, undefined, headers);
}

/**
 * A call to the dashboard's own endpoints (`api/session`, `api/load`), relative to the page; typed as `api`.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function uiApi(method, path, body) {
  return parsed(await request(path, method, body, {}, false));
}
