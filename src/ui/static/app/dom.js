/**
 * The only way the dashboard builds elements. Text always goes in as text nodes (never HTML), so job output,
 * parameter values and descriptions cannot inject markup or scripts.
 */

/** `h('a', {href: '#/jobs', class: 'x', onclick: fn}, 'text', child…)`: an element with attributes and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name === 'value') el.value = value;
    else if (name === 'checked') el.checked = Boolean(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

/** `svg('rect', {x: 1, class: 'bar'}, child…)`: an SVG element the same way (attributes only, text as text nodes). */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A small notice above the page's content; errors stay until dismissed. */
export function notice(text, kind = 'info') {
  const bar = h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
  bar.appendChild(h('button', { type: 'button', class: 'link', onclick: () => bar.remove() }, '×'));
  document.getElementById('main')?.prepend(bar);
  if (kind !== 'error') setTimeout(() => bar.remove(), 4000);
  return bar;
}

/**
 * Closes every open dialog: a page that is left takes its questions with it (the router calls it on every
 * navigation, and sign-out). Each dialog answers "no" when closed this way (confirm.js).
 */
export function closeDialogs() {
  for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
}
