/**
 * Calls to the server. The JSON interface is reached at the base URL the session names, signed in by the
 * HttpOnly session cookie (the browser sends it); state-changing calls carry the session's CSRF token.
 */

const state = { jsonBase: '', csrf: '', onSignedOut: () => {} };

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function configureApi(session, onSignedOut) {
  state.jsonBase = session.jsonBase;
  state.csrf = session.csrf;
  if (onSignedOut) state.onSignedOut = onSignedOut;
}

export const jsonBase = () => state.jsonBase;

/** `query` values that are empty or undefined are left out. */
export function withQuery(path, query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

async function request(url, method, body, headers = {}, notify = true) {
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

async function parsed(res) {
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) throw new ApiError(res.status, json?.message ?? `${res.status} ${res.statusText}`);
  return json;
}

/** A call to the JSON interface: `api('GET', '/Job/12')`. */
export async function api(method, path, body) {
  return parsed(await request(state.jsonBase + path, method, body));
}

/** The raw response of a GET (or HEAD) on the JSON interface (job file sizes and ranges). */
export function apiRaw(path, headers, method = 'GET') {
  return request(state.jsonBase + path, method, undefined, headers);
}

/** A call to the dashboard's own endpoints (`api/session`, `api/load`), relative to the page. */
export async function uiApi(method, path, body) {
  return parsed(await request(path, method, body, {}, false));
}
