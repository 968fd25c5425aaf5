/**
 * The only way the dashboard builds elements. Text always goes in as text nodes (never HTML), so job output,
 * parameter values and descriptions cannot inject markup or scripts.
 */

/**
 * An attribute's value; `on…` names take a listener. Left out when undefined, null or false; `true` is present.
 * @typedef {string | number | boolean | null | undefined | ((event: Event) => unknown)} AttrValue
 */
/** @typedef {Record<string, AttrValue>} Attrs */
/** @typedef {Node | string | number | boolean | null | undefined} Leaf */
/**
 * What may be a child: a node, text (a string or number, as a text node), nothing (null, undefined, false), or a list
 * of them, nested up to three deep (JSDoc cannot declare the recursive type).
 * @typedef {Leaf | Array<Leaf | Array<Leaf | Array<Leaf>>>} Child
 */

/**
 * `h('a', {href: '#/jobs', class: 'x', onclick: fn}, 'text', child…)`: an element with attributes and children.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = String(value);
    else if (name === 'value' && 'value' in el) el.value = String(value);
    else if (name === 'checked' && 'checked' in el) el.checked = Boolean(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * `svg('rect', {x: 1, class: 'bar'}, child…)`: an SVG element the same way (attributes only, text as text nodes).
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
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

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/**
 * Replaces an element's children.
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * The trimmed value of a form's input or select named `name`; empty when it has none.
 * @param {HTMLFormElement} form
 * @param {string} name
 */
export function fieldValue(form, name) {
  const el = form.elements.namedItem(name);
  return el instanceof HTMLInputElement || el instanceof HTMLSelectElement ? el.value.trim() : '';
}

/**
 * A small notice above the page's content; errors stay until dismissed.
 * @param {string} text
 * @param {'info' | 'error'} [kind]
 */
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
  for (const dialog of document.querySelectorAll('dialog')) if (dialog.open) dialog.close();
}

/**
 * Shows `dialog` modally, focused on `focus`, and answers `answer()` once it closes, however it closes (its
 * buttons, Escape, a navigation: closeDialogs); it is removed then, after `onClose`.
 * @template T
 * @param {HTMLDialogElement} dialog
 * @param {HTMLElement} focus
 * @param {() => T} answer
 * @param {() => void} [onClose]
 * @returns {Promise<T>}
 */
export function showDialog(dialog, focus, answer, onClose) {
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      onClose?.();
      dialog.remove();
      resolve(answer());
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    focus.focus();
  });
}
