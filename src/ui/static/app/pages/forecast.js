/**
 * The forecast: every start the scheduler will make in the next 24 hours or 7 days (`GET {base}/forecast`, walked
 * page by page up to a cap), one timeline row per definition or per queue, filtered like the job list, with the
 * open periods of a chosen time window (`GET {base}/TimeWindow/<key>/openings`) shaded behind it: its holidays.
 */
import { api, withQuery } from '../api.js';
import { parseWireDate, isoUtc } from '../dates.js';
import { fieldValue, fill, h } from '../dom.js';
import { errorText } from '../format.js';
import { navigate } from '../router.js';
import { serverNow } from '../session.js';
import { isRange, RANGES, timeline } from '../timeline.js';
/** @import { ForecastEntry, Opening, Page, TimeWindow } from '../api-types.js' */
/** @import { RangeName, Row, Shade } from '../timeline.js' */

/**
 * What the page shows, from its address: the range, what a row is, the filters and the time window shaded.
 * @typedef {{ range: RangeName, by: 'JobDefinition' | 'Queue', filters: Record<string, string>, calendar: string }}
 *   View
 */

const FILTERS = ['JobDefinition', 'Queue', 'Partition'];
/** Entries fetched at most (pages of 1,000): beyond it the timeline says it is cut short. */
const MAX_ENTRIES = 5000;
/** Rows drawn at most; the rest are counted, not drawn. */
const MAX_ROWS = 80;

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} _params
 * @param {Record<string, string>} query
 */
export function renderForecast(main, _params, query) {
  /** @type {View} */
  const view = {
    range: isRange(query.Range) ? query.Range : '7d',
    by: query.By === 'Queue' ? 'Queue' : 'JobDefinition',
    filters: Object.fromEntries(FILTERS.map((f) => [f, query[f] ?? ''])),
    calendar: query.Calendar ?? '',
  };
  let stopped = false;
  const { form, windows } = filterForm(view);
  const info = h('p', { class: 'muted', id: 'forecast-info', role: 'status' }, 'Loading the forecast…');
  const chart = h('div', { class: 'timeline-wrap' });
  const legend = h('p', { class: 'muted small', id: 'forecast-legend' });
  fill(
    main,
    h('h1', {}, 'Forecast'),
    form,
    info,
    chart,
    legend,
    h('button', { type: 'button', id: 'forecast-refresh', onclick: () => void load() }, 'Refresh'),
  );

  async function load() {
    const from = serverNow();
    const until = from + RANGES[view.range].ms;
    info.textContent = 'Loading the forecast…';
    try {
      const [{ entries, capped }, shaded] = await Promise.all([
        forecastEntries(view.filters, from, until, () => stopped),
        shades(view.calendar, from, until),
      ]);
      if (stopped) return;
      const rows = rowsOf(entries, view.by);
      const span = `${new Date(from).toLocaleString()} to ${new Date(until).toLocaleString()}`;
      info.textContent = summary(entries.length, rows.length, capped, span, view.by);
      const drawn = rows.slice(0, MAX_ROWS);
      fill(
        chart,
        drawn.length ? timeline({ rows: drawn, shades: shaded, from, until, label: `Forecast, ${span}` }) : null,
      );
      fill(legend, legendOf(view.calendar, shaded));
    } catch (err) {
      if (!stopped) info.textContent = errorText(err);
    }
  }

  void loadWindowNames(windows, view.calendar);
  void load();
  return () => {
    stopped = true;
  };
}

/**
 * The filters, the range and row switches and the calendar picker; submitting puts them in the address.
 * @param {View} view
 */
function filterForm({ range, by, filters, calendar }) {
  /**
   * @param {string} name
   * @param {string} label
   * @param {[string, string][]} options  each option's value and text
   * @param {string} value
   */
  const select = (name, label, options, value) => {
    const el = h(
      'select',
      { name, id: `fc-${name}`, 'aria-label': label },
      options.map(([v, text]) => h('option', { value: v }, text)),
    );
    el.value = value;
    return el;
  };
  const windows = select('Calendar', 'Shade the open days of this time window', [['', 'No calendar shaded']], '');
  if (calendar) windows.append(h('option', { value: calendar }, calendar));
  windows.value = calendar;
  /** @type {[string, string][]} */
  const ranges = Object.entries(RANGES).map(([v, r]) => [v, r.label]);
  /** @type {[string, string][]} */
  const rowKinds = [
    ['JobDefinition', 'Row per definition'],
    ['Queue', 'Row per queue'],
  ];
  const inputs = FILTERS.map((f) =>
    h('input', {
      name: f,
      id: `fc-${f}`,
      placeholder: f === 'JobDefinition' ? 'Definition' : f,
      value: filters[f],
      'aria-label': f,
    }),
  );
  const form = h(
    'form',
    { class: 'filters', id: 'forecast-filters' },
    select('Range', 'Range', ranges, range),
    select('By', 'One row per', rowKinds, by),
    inputs,
    windows,
    h('button', { type: 'submit' }, 'Show'),
    h('button', { type: 'button', class: 'link', onclick: () => navigate('/forecast') }, 'Clear'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    /** @type {Record<string, string>} */
    const q = {};
    for (const name of ['Range', 'By', ...FILTERS, 'Calendar']) {
      const v = fieldValue(form, name);
      if (v) q[name] = v;
    }
    navigate('/forecast', q);
  });
  return { form, windows };
}

/**
 * Fills the calendar picker with the time windows the user may view.
 * @param {HTMLSelectElement} windows
 * @param {string} calendar  the one the address names
 */
async function loadWindowNames(windows, calendar) {
  try {
    /** @type {Page<TimeWindow>} */
    const res = await api('GET', withQuery('/TimeWindow', { Limit: 1000, fields: 'Partition,Name' }));
    const keys = res.items.map((w) => `${w.Partition}.${w.Name}`).filter((k) => k !== calendar);
    windows.append(...keys.map((k) => h('option', { value: k }, k)));
    windows.value = calendar;
  } catch {
    // Without View on time windows the picker keeps what the address names.
  }
}

/**
 * The forecast's entries of [from, until), page after page, up to MAX_ENTRIES; `capped` when more were left.
 * @param {Record<string, string>} filters
 * @param {number} from
 * @param {number} until
 * @param {() => boolean} isStopped
 */
async function forecastEntries(filters, from, until, isStopped) {
  /** @type {ForecastEntry[]} */
  const entries = [];
  let after = '';
  do {
    /** @type {Page<ForecastEntry>} */
    const res = await api(
      'GET',
      withQuery('/forecast', { From: isoUtc(from), Until: isoUtc(until), ...filters, Limit: 1000, After: after }),
    );
    entries.push(...res.items);
    after = res.next ?? '';
  } while (after && entries.length < MAX_ENTRIES && !isStopped());
  return { entries, capped: Boolean(after) };
}

/**
 * The open periods of the chosen window over the range, as the timeline shades them.
 * @param {string} calendar
 * @param {number} from
 * @param {number} until
 * @returns {Promise<Shade[]>}
 */
async function shades(calendar, from, until) {
  if (!calendar) return [];
  const path = `/TimeWindow/${encodeURIComponent(calendar)}/openings`;
  /** @type {Page<Opening>} */
  const res = await api('GET', withQuery(path, { From: isoUtc(from), Until: isoUtc(until) }));
  return res.items.map((o) => ({
    from: parseWireDate(o.From),
    until: parseWireDate(o.Until),
    fromText: o.From,
    title: `${calendar} is open from ${o.From} until ${o.Until}`,
  }));
}

/**
 * One row per definition or queue, in order of its key, each with its starts.
 * @param {ForecastEntry[]} entries
 * @param {View['by']} by
 * @returns {Row[]}
 */
function rowsOf(entries, by) {
  /** @type {Map<string, Row['entries']>} */
  const byKey = new Map();
  for (const entry of entries) {
    const key = entry[by] ?? '—';
    const starts = byKey.get(key) ?? [];
    byKey.set(key, starts);
    starts.push({ ms: parseWireDate(entry.Start), entry });
  }
  return [...byKey.keys()].sort().map((key) => ({
    key,
    href: by === 'Queue' ? '#/infra' : `#/definition/${encodeURIComponent(key)}`,
    entries: byKey.get(key) ?? [],
  }));
}

/**
 * The line above the timeline: how many starts of how many rows, and what was left out.
 * @param {number} count
 * @param {number} rowCount
 * @param {boolean} capped
 * @param {string} span
 * @param {View['by']} by
 */
function summary(count, rowCount, capped, span, by) {
  /**
   * @param {number} n
   * @param {string} one
   * @param {string} many
   */
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  /** @type {[string, string]} */
  const what = by === 'Queue' ? ['queue', 'queues'] : ['definition', 'definitions'];
  return [
    count === 0
      ? `Nothing is planned from ${span}.`
      : `${plural(count, 'planned start', 'planned starts')} of ${plural(rowCount, ...what)}, ${span}.`,
    capped ? ` Only the first ${count} starts are shown: narrow the filters to see the rest.` : '',
    rowCount > MAX_ROWS ? ` Only the first ${MAX_ROWS} rows are drawn.` : '',
  ].join('');
}

/**
 * @param {string} calendar
 * @param {Shade[]} shaded
 */
function legendOf(calendar, shaded) {
  if (!calendar) return 'Hover a tick for its start, source and job; a tick with a job opens it.';
  return [
    'Shaded: when ',
    h('a', { href: `#/timewindow/${encodeURIComponent(calendar)}` }, calendar),
    ` is open (${shaded.length} ${shaded.length === 1 ? 'period' : 'periods'} in this range).`,
  ];
}
