/**
 * A definition's form, generated from the registry's declaration of its type (`ui/api/types`): one widget per field
 * the body may set, chosen by its kind (definition-values.js `widgetOf`); a record is a group of its own fields.
 * Every widget has a place for the message the server gives about it (`data-field` names its path).
 */
import { api, withQuery } from './api.js';
import { h } from './dom.js';
import { editable, fromText, toText, widgetOf, widgetPath } from './definition-values.js';
/** @import { FieldDescription, FieldKind, Page } from './api-types.js' */

/** @typedef {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} Control */
/**
 * A field's widget: where it shows its message, and how its value is read.
 * @typedef {{ path: string, box: HTMLElement, error: HTMLElement, read: () => { value: unknown, problem?: string } }}
 *   Widget
 */

const HINTS = {
  lines: 'one a line',
  map: 'one "Name: value" a line',
  json: 'JSON, checked by the server',
};

/**
 * @param {{ fields: FieldDescription[], values: Record<string, unknown>, locked?: string[], readOnly?: boolean }}
 *   options  `locked`: fields shown but not changed (an edit's key); `readOnly`: the whole form only shown
 */
export function definitionForm({ fields, values, locked = [], readOnly = false }) {
  /** @type {Map<string, Widget>} */
  const widgets = new Map();
  const top = editable(fields).map((f) => {
    const w = widget(f, values[f.name], f.name, readOnly || locked.includes(f.name), widgets);
    return { name: f.name, w };
  });
  const element = h(
    'div',
    { class: 'def-form' },
    top.map(({ w }) => w.box),
  );

  return {
    element,
    /** The form's values by field (locked ones left out), and the problems found reading them. */
    read() {
      /** @type {Record<string, unknown>} */
      const out = {};
      let problems = 0;
      for (const { name, w } of top) {
        if (locked.includes(name)) continue;
        const { value, problem } = w.read();
        if (problem) problems += 1;
        else if (value !== undefined) out[name] = value;
      }
      return { values: out, problems };
    },
    /**
     * Shows `message` at the widget of `path` or the nearest one above it; false when no widget is near.
     * @param {string} path
     * @param {string} message
     */
    showError(path, message) {
      const at = widgetPath(path, (p) => widgets.has(p));
      const w = at ? widgets.get(at) : undefined;
      if (!w) return false;
      w.error.textContent = message;
      w.box.classList.add('invalid');
      for (let d = w.box.closest('details'); d; d = d.parentElement?.closest('details') ?? null) d.open = true;
      w.box.scrollIntoView({ block: 'center' });
      return true;
    },
    clearErrors() {
      for (const w of widgets.values()) {
        w.error.textContent = '';
        w.box.classList.remove('invalid');
      }
    },
  };
}

/**
 * @param {FieldDescription} f
 * @param {unknown} value
 * @param {string} path
 * @param {boolean} disabled
 * @param {Map<string, Widget>} widgets  every widget made, by path
 * @returns {Widget}
 */
function widget(f, value, path, disabled, widgets) {
  const error = h('div', { class: 'field-error error', role: 'alert' });
  const label = h('span', { class: 'field-name' }, f.name, f.required ? h('span', { class: 'req' }, ' *') : null);
  const about = f.description ? h('div', { class: 'muted small' }, f.description) : null;
  const kind = f.kind;
  if (kind.kind === 'record') {
    const record = /** @type {Record<string, unknown>} */ (value && typeof value === 'object' ? value : {});
    const parts = editable(kind.fields).map((sub) => ({
      name: sub.name,
      w: widget(sub, record[sub.name], `${path}.${sub.name}`, disabled, widgets),
    }));
    // Folded while empty: a definition type's groups for other kinds of definition (Http, Sql …) stay out of the way.
    const filled = Object.values(record).some((x) => x !== null && x !== undefined);
    const box = h(
      'details',
      { class: 'record', 'data-field': path, open: filled },
      h('summary', {}, label),
      about,
      error,
    );
    for (const p of parts) box.append(p.w.box);
    /** @type {Widget} */
    const w = {
      path,
      box,
      error,
      read() {
        /** @type {Record<string, unknown>} */
        const out = {};
        /** @type {string | undefined} */
        let problem;
        for (const p of parts) {
          const r = p.w.read();
          if (r.problem) problem = r.problem;
          else if (r.value !== null && r.value !== undefined) out[p.name] = r.value;
        }
        if (problem) return { value: undefined, problem };
        return { value: Object.keys(out).length ? out : null };
      },
    };
    widgets.set(path, w);
    return w;
  }
  const control = controlFor(kind, f, value, path, disabled);
  const suggestions =
    kind.kind === 'timezone'
      ? suggest(control, async () => Intl.supportedValuesOf('timeZone'))
      : kind.kind === 'reference'
        ? suggest(control, () => keysOf(kind.type))
        : null;
  const hint = HINTS[/** @type {keyof typeof HINTS} */ (widgetOf(kind))];
  const box = h(
    'div',
    { class: 'def-field', 'data-field': path },
    h('label', { for: control.id }, label),
    h('div', {}, control, suggestions, hint ? h('span', { class: 'muted small' }, ` ${hint}`) : null, about, error),
  );
  /** @type {Widget} */
  const w = {
    path,
    box,
    error,
    read() {
      // A secret left empty keeps the stored one: it is never shown, so empty means "unchanged".
      if (kind.kind === 'secret' && control.value === '') return { value: undefined };
      const r = fromText(kind, control.value);
      if (r.problem !== undefined) {
        error.textContent = `${f.name} ${r.problem}`;
        box.classList.add('invalid');
        return { value: undefined, problem: r.problem };
      }
      return { value: r.value };
    },
  };
  widgets.set(path, w);
  return w;
}

/**
 * The input, select or text area of a kind, holding `value`.
 * @param {FieldKind} kind
 * @param {FieldDescription} f
 * @param {unknown} value
 * @param {string} path
 * @param {boolean} disabled
 * @returns {Control}
 */
function controlFor(kind, f, value, path, disabled) {
  const id = `f-${path}`;
  const text = toText(kind, value);
  // An empty default ([], {}) says nothing worth a placeholder.
  const given = f.default === undefined ? '' : toText(kind, f.default);
  const fallback = given && given !== '[]' && given !== '{}' ? `default: ${given}` : '';
  const w = widgetOf(kind);
  if (w === 'select' || w === 'boolean') {
    const options = kind.kind === 'enum' ? kind.values : ['true', 'false'];
    const select = h(
      'select',
      { id, name: path, disabled },
      h('option', { value: '' }, fallback ? `(${fallback})` : '(none)'),
      options.map((o) => h('option', { value: o }, o)),
    );
    select.value = text;
    return select;
  }
  if (w === 'textarea' || w === 'lines' || w === 'map' || w === 'json') {
    const rows = w === 'textarea' || w === 'json' ? Math.min(20, Math.max(4, text.split('\n').length + 1)) : 3;
    return h('textarea', { id, name: path, rows, disabled, placeholder: fallback, spellcheck: 'false' }, text);
  }
  const input = h('input', {
    id,
    name: path,
    value: text,
    disabled,
    placeholder: kind.kind === 'date' ? '2026/11/23 08:00:00,000 Europe/Amsterdam' : fallback,
    type: w === 'secret' ? 'password' : 'text',
    autocomplete: w === 'secret' ? 'new-password' : 'off',
    inputmode: w === 'number' ? 'decimal' : undefined,
  });
  return input;
}

/**
 * The list of suggestions of an input (to place beside it): the values `load` gives, loaded once when the input
 * first gets the focus.
 * @param {Control} input
 * @param {() => Promise<string[]>} load
 */
function suggest(input, load) {
  const list = h('datalist', { id: `${input.id}-list` });
  input.setAttribute('list', list.id);
  let loaded = false;
  input.addEventListener('focus', async () => {
    if (loaded) return;
    loaded = true;
    try {
      list.append(...(await load()).map((v) => h('option', { value: v })));
    } catch {
      loaded = false;
    }
  });
  return list;
}

/**
 * The keys of the objects of a type the user may view (the first 200), for a reference's suggestions.
 * @param {string} type
 */
async function keysOf(type) {
  /** @type {Page<{ businessKey: string }>} */
  const res = await api('GET', withQuery(`/${type}`, { Limit: 200, fields: 'businessKey' }));
  return res.items.map((o) => o.businessKey.slice(type.length + 1));
}
