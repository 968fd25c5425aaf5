/**
 * Hash routing: `#/jobs?Status=Error`, `#/job/12`, … Each page is `render(main, params, query)` and returns a
 * function that stops what it started (timers, feed subscriptions) when the page is left.
 */

import { closeDialogs } from './dom.js';

/**
 * A page: fills `main` and returns (or resolves to) the function that stops what it started, if it started anything.
 * @typedef {(main: HTMLElement, params: Record<string, string>, query: Record<string, string>)
 *   => void | (() => void) | Promise<void | (() => void)>} Render
 */

/** @type {{ re: RegExp, names: string[], render: Render }[]} */
const routes = [];
/** @type {(() => void) | null} */
let stop = null;
let generation = 0;

/**
 * @param {string} pattern  a path with `:name` parts, `/job/:id`
 * @param {Render} render
 */
export function route(pattern, render) {
  /** @type {string[]} */
  const names = [];
  const source = pattern.replace(/:(\w+)/g, (_m, /** @type {string} */ n) => {
    names.push(n);
    return '([^/]+)';
  });
  const re = new RegExp(`^${source}$`);
  routes.push({ re, names, render });
}

export function parseHash(hash = location.hash) {
  const raw = hash.replace(/^#/, '') || '/jobs';
  const [path = '', qs = ''] = raw.split('?');
  return { path, query: Object.fromEntries(new URLSearchParams(qs)) };
}

/**
 * @param {string} path
 * @param {Record<string, string | undefined>} [query]  empty and undefined values are left out
 */
export function navigate(path, query = {}) {
  const pairs = Object.entries(query).flatMap(([k, v]) => (v === undefined || v === '' ? [] : [[k, v]]));
  const q = new URLSearchParams(pairs).toString();
  location.hash = q ? `${path}?${q}` : path;
}

/** Stops the page shown (its timers, feed subscriptions and dialogs), as when it is left; also at sign-out. */
export function leave() {
  stop?.();
  stop = null;
  generation += 1;
  closeDialogs();
}

/** @param {HTMLElement} main */
export async function show(main) {
  leave();
  const { path, query } = parseHash();
  for (const r of routes) {
    const m = r.re.exec(path);
    if (!m) continue;
    const params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1] ?? '')]));
    main.replaceChildren();
    for (const a of document.querySelectorAll('#nav a')) {
      if (!(a instanceof HTMLElement)) continue;
      a.classList.toggle(
        'active',
        path.startsWith(`/${a.dataset.page}`) || (a.dataset.page === 'jobs' && path.startsWith('/job/')),
      );
    }
    const mine = ++generation;
    const stopper = (await r.render(main, params, query)) ?? null;
    if (mine === generation) stop = stopper;
    else stopper?.();
    return;
  }
  navigate('/jobs');
}
