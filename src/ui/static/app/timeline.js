/**
 * The forecast drawn as an SVG timeline: one row per definition (or queue), a tick at each planned start (its
 * title is the hover: start, source, job), the open periods of a chosen calendar shaded behind all rows, and an
 * axis of days (or hours) in the browser's time zone. SVG geometry is attributes, not styles, so the page's strict
 * CSP holds. Pure DOM building: no requests.
 */
import { svg } from './dom.js';
import { DAY_MS, HOUR_MS } from './dates.js';
/** @import { ForecastEntry } from './api-types.js' */
/**
 * A row and its starts; `ms` is null for a date this browser cannot read (a zone it does not know).
 * @typedef {{ key: string, href: string, entries: { ms: number | null, entry: ForecastEntry }[] }} Row
 */
/** @typedef {{ from: number | null, until: number | null, fromText: string, title: string }} Shade  an open period */

const LABEL_W = 230;
const PLOT_W = 960;
const ROW_H = 24;
const AXIS_H = 30;
const TICK_W = 3;

/**
 * The local instants at which the axis gets a line: each midnight (a week) or every 3 hours (a day).
 * @param {number} from
 * @param {number} until
 */
function axisMarks(from, until) {
  /** @type {number[]} */
  const marks = [];
  const d = new Date(from);
  const daily = until - from > 2 * DAY_MS;
  if (daily) d.setHours(24, 0, 0, 0);
  else {
    d.setMinutes(0, 0, 0);
    do d.setHours(d.getHours() + 1);
    while (d.getHours() % 3 !== 0);
  }
  while (d.getTime() < until && marks.length < 100) {
    marks.push(d.getTime());
    if (daily) d.setDate(d.getDate() + 1);
    else d.setHours(d.getHours() + 3);
  }
  return marks.map((ms) => ({ ms, label: axisLabel(ms, until - from) }));
}

/**
 * A day (`Mon, Dec 21`) on a week's axis, a time (`06:00`) on a day's.
 * @param {number} ms
 * @param {number} span  the axis's length (ms)
 */
function axisLabel(ms, span) {
  const daily = span > 2 * DAY_MS;
  return new Intl.DateTimeFormat(
    undefined,
    daily ? { weekday: 'short', day: 'numeric', month: 'short' } : { hour: '2-digit', minute: '2-digit' },
  ).format(new Date(ms));
}

/**
 * One line of a start's hover: when, what, from where, which job.
 * @param {ForecastEntry} e
 */
export function startTitle(e) {
  const job = e.Job ? `, job ${e.Job}` : '';
  const window = e.TimeWindow ? `, window ${e.TimeWindow}` : '';
  return `${e.Start}: ${e.JobDefinition} (${e.Source}${job}), queue ${e.Queue}${window}`;
}

/**
 * `rows`: [{key, href, entries: [{ms, entry}]}]; `shades`: [{from, until, title}] (epoch ms); the range [from, until).
 * @param {{ rows: Row[], shades: Shade[], from: number, until: number, label: string }} chart
 */
export function timeline({ rows, shades, from, until, label }) {
  const height = AXIS_H + rows.length * ROW_H + 4;
  const width = LABEL_W + PLOT_W + 8;
  // An instant on the plot, kept within it; one that is not known (null) is drawn at the start.
  const x = (/** @type {number | null} */ ms) =>
    LABEL_W + ((Math.min(Math.max(ms ?? from, from), until) - from) / (until - from)) * PLOT_W;
  const root = svg('svg', {
    id: 'forecast',
    class: 'timeline',
    viewBox: `0 0 ${width} ${height}`,
    width,
    role: 'group',
    'aria-label': label,
  });
  const marks = axisMarks(from, until);
  const labelled = (/** @type {{ ms: number }} */ m) => x(m.ms) + 80 < width; // a label that would run off the right edge is left out
  // The range's own start gets a label (no line) when the first mark is far enough from it.
  const first = marks[0] === undefined || x(marks[0].ms) - LABEL_W > 90 ? axisLabel(from, until - from) : null;
  root.append(
    svg(
      'g',
      { class: 'stripes' },
      rows.map((_row, i) =>
        svg('rect', { class: i % 2 ? 'stripe odd' : 'stripe', x: 0, y: AXIS_H + i * ROW_H, width, height: ROW_H }),
      ),
    ),
    svg(
      'g',
      { class: 'shades' },
      shades.map((s) =>
        svg(
          'rect',
          {
            class: 'holiday',
            x: x(s.from),
            y: AXIS_H,
            width: Math.max(1, x(s.until) - x(s.from)),
            height: height - AXIS_H,
            'data-from': s.fromText,
          },
          svg('title', {}, s.title),
        ),
      ),
    ),
    svg(
      'g',
      { class: 'axis' },
      first ? svg('text', { x: LABEL_W + 3, y: AXIS_H - 10 }, first) : null,
      marks.map((m) => [
        svg('line', { x1: x(m.ms), x2: x(m.ms), y1: AXIS_H - 6, y2: height }),
        labelled(m) ? svg('text', { x: x(m.ms) + 3, y: AXIS_H - 10 }, m.label) : null,
      ]),
    ),
  );
  rows.forEach((row, i) => {
    const y = AXIS_H + i * ROW_H;
    root.append(
      svg(
        'g',
        { class: 'row', 'data-row': row.key },
        svg(
          'a',
          { href: row.href },
          svg('text', { class: 'label', x: 6, y: y + ROW_H / 2 + 4 }, row.key, svg('title', {}, row.key)),
        ),
        row.entries.map(({ ms, entry }) => {
          const tick = svg(
            'rect',
            {
              class: `start ${entry.Source === 'Scheduled' ? 'scheduled' : 'recurrence'}`,
              x: x(ms) - TICK_W / 2,
              y: y + 4,
              width: TICK_W,
              height: ROW_H - 8,
              'data-start': entry.Start,
            },
            svg('title', {}, startTitle(entry)),
          );
          return entry.Job ? svg('a', { href: `#/job/${entry.Job}` }, tick) : tick;
        }),
      ),
    );
  });
  return root;
}

/** @typedef {'24h' | '7d'} RangeName */
/**
 * The span of the forecast, by its switch: the next 24 hours or 7 days.
 * @type {Record<RangeName, { label: string, ms: number }>}
 */
export const RANGES = {
  '24h': { label: 'Next 24 hours', ms: 24 * HOUR_MS },
  '7d': { label: 'Next 7 days', ms: 7 * DAY_MS },
};

/**
 * Whether `name` is a span of RANGES.
 * @param {unknown} name
 * @returns {name is RangeName}
 */
export const isRange = (name) => typeof name === 'string' && Object.hasOwn(RANGES, name);
