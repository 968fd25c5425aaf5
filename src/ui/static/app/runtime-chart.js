/**
 * A definition's runtime (`GET {base}/JobDefinition/<key>/statistics`, docs/architecture.md §8b): its figures, a
 * chart of its last runs (duration per run, coloured by status, with the P50 and P95 lines) drawn by uPlot, which
 * the server serves itself (`vendor/`), and the runs as a table. A chain's steps get their figures in a table.
 */
import { api } from './api.js';
import { fill, h } from './dom.js';
import { shortTime, statusClass, text } from './format.js';

/**
 * @typedef {{Job: number, Status: string, RunStart: string, Seconds: number}} Run
 * @typedef {object} Figures
 * @property {number} Runs
 * @property {number} Completed
 * @property {number} Error
 * @property {number} Killed
 * @property {number} Unknown
 * @property {number | null} MeanSeconds
 * @property {number | null} P50Seconds
 * @property {number | null} P95Seconds
 * @property {number | null} MaxSeconds
 * @property {Run[]} LastRuns
 * @typedef {Figures & {Steps?: Array<Figures & {Step: string}>}} Statistics
 */

/** Colours of the run statuses (the badges' colours of style.css), and of the P50 and P95 lines. */
const STATUS_COLOURS = { Completed: '#1a7f37', Error: '#c2271d', Killed: '#d1670a', Unknown: '#6e7781' };
const P50_COLOUR = '#0b63c5';
const P95_COLOUR = '#8250df';

/**
 * uPlot's constructor, typed by the declarations its package ships (the browser loads the server's copy, not this
 * import, which only names the type).
 * @typedef {typeof import('uplot')} UPlot
 */

/** @type {Promise<UPlot> | undefined} */
let loading;

/**
 * uPlot, loaded once on first use from the server's own copy.
 * @returns {Promise<UPlot>}
 */
function loadUPlot() {
  const w = /** @type {Window & { uPlot?: UPlot }} */ (window);
  if (w.uPlot) return Promise.resolve(w.uPlot);
  loading ??= new Promise((resolve, reject) => {
    document.head.append(h('link', { rel: 'stylesheet', href: 'vendor/uPlot.min.css' }));
    const script = h('script', { src: 'vendor/uPlot.iife.min.js' });
    script.addEventListener('load', () =>
      w.uPlot ? resolve(w.uPlot) : reject(new Error('The chart library did not define uPlot')),
    );
    script.addEventListener('error', () => reject(new Error('The chart library could not be loaded')));
    document.head.append(script);
  });
  return loading;
}

/**
 * `12.5 s`, `3 min 20 s`, `1 h 5 min`.
 * @param {number | null} s
 * @returns {string}
 */
export function duration(s) {
  if (s === null || s === undefined) return '—';
  if (s < 60) return `${Math.round(s * 1000) / 1000} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/**
 * The figures in one line.
 * @param {Figures} f
 * @returns {string}
 */
const summary = (f) =>
  `${f.Runs} runs (Completed ${f.Completed}, Error ${f.Error}, Killed ${f.Killed}, Unknown ${f.Unknown}) · ` +
  `mean ${duration(f.MeanSeconds)} · P50 ${duration(f.P50Seconds)} · P95 ${duration(f.P95Seconds)} · ` +
  `longest ${duration(f.MaxSeconds)}`;

/**
 * The data uPlot draws: x is the run's place (oldest first), one series of points per status (null where the run
 * has another), then the P50 and P95 lines across.
 * @param {Statistics} s
 * @returns {[number[], ...Array<Array<number | null>>]}
 */
export function chartData(s) {
  const runs = [...s.LastRuns].reverse();
  const x = runs.map((_, i) => i + 1);
  const byStatus = Object.keys(STATUS_COLOURS).map((status) =>
    runs.map((r) => (r.Status === status ? r.Seconds : null)),
  );
  return [x, ...byStatus, x.map(() => s.P50Seconds), x.map(() => s.P95Seconds)];
}

/**
 * Draws the chart of the runs into `box` (`data-points` says how many runs it holds).
 * @param {HTMLElement} box
 * @param {Statistics} s
 */
async function drawChart(box, s) {
  const uPlot = await loadUPlot();
  const data = chartData(s);
  const point = (/** @type {string} */ stroke) => ({ stroke, fill: stroke, size: 7 });
  const series = [
    { label: 'Run' },
    ...Object.entries(STATUS_COLOURS).map(([label, colour]) => ({
      label,
      stroke: colour,
      paths: () => null,
      points: { show: true, ...point(colour) },
      value: (/** @type {unknown} */ _u, /** @type {number | null} */ v) => (v === null ? '—' : duration(v)),
    })),
    { label: 'P50', stroke: P50_COLOUR, width: 1, dash: [6, 4], points: { show: false } },
    { label: 'P95', stroke: P95_COLOUR, width: 1, dash: [2, 4], points: { show: false } },
  ];
  const width = Math.max(320, Math.min(900, box.parentElement?.clientWidth ?? 600));
  box.replaceChildren();
  box.dataset.points = String(data[0]?.length ?? 0);
  new uPlot(
    {
      width,
      height: 240,
      scales: {
        x: { time: false },
        y: {
          range: (/** @type {unknown} */ _u, /** @type {number} */ _min, /** @type {number} */ max) => [
            0,
            Math.max(1, max * 1.1),
          ],
        },
      },
      axes: [{ label: 'Run (oldest to newest)', incrs: [1, 2, 5, 10, 20, 50] }, { label: 'Seconds' }],
      series,
    },
    data,
    box,
  );
}

/**
 * The newest runs as a table (what the chart draws, in words).
 * @param {Run[]} runs
 * @returns {HTMLElement}
 */
const runsTable = (runs) =>
  h(
    'table',
    { class: 'runs', id: 'runtime-runs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Job', 'Status', 'Started', 'Duration'].map((c) => h('th', {}, c)),
      ),
    ),
    h(
      'tbody',
      {},
      runs.map((r) =>
        h(
          'tr',
          { 'data-run': r.Job },
          h('td', {}, h('a', { href: `#/job/${r.Job}` }, String(r.Job))),
          h('td', {}, h('span', { class: statusClass(r.Status) }, r.Status)),
          h('td', { class: 'time', title: r.RunStart }, shortTime(r.RunStart)),
          h('td', {}, duration(r.Seconds)),
        ),
      ),
    ),
  );

/**
 * A chain's steps with their figures.
 * @param {Array<Figures & {Step: string}>} steps
 * @returns {HTMLElement}
 */
const stepsTable = (steps) =>
  h(
    'table',
    { class: 'runs', id: 'runtime-steps' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Step', 'Runs', 'Mean', 'P50', 'P95', 'Longest'].map((c) => h('th', {}, c)),
      ),
    ),
    h(
      'tbody',
      {},
      steps.map((st) =>
        h(
          'tr',
          {},
          h('td', {}, text(st.Step)),
          h('td', {}, String(st.Runs)),
          [st.MeanSeconds, st.P50Seconds, st.P95Seconds, st.MaxSeconds].map((v) => h('td', {}, duration(v))),
        ),
      ),
    ),
  );

/**
 * The definition page's runtime section; it fills itself once the statistics are read.
 * @param {string} key the definition's `<partition>.<name>`
 * @returns {HTMLElement}
 */
export function runtimeSection(key) {
  const info = h('p', { class: 'muted', id: 'runtime-summary' }, 'Loading…');
  const chart = h('div', {
    class: 'runtime-chart',
    id: 'runtime-chart',
    role: 'img',
    'aria-label': 'Duration of the last runs',
  });
  const more = h('div');
  const section = h('section', { id: 'runtime' }, h('h2', {}, 'Runtime'), info, chart, more);
  void (async () => {
    /** @type {Statistics} */
    let s;
    try {
      s = await api('GET', `/JobDefinition/${encodeURIComponent(key)}/statistics`);
    } catch (err) {
      info.textContent = err instanceof Error ? err.message : String(err);
      return;
    }
    info.textContent = s.Runs === 0 ? 'No finished runs yet.' : summary(s);
    if (s.LastRuns.length > 0) {
      try {
        await drawChart(chart, s);
      } catch (err) {
        chart.textContent = err instanceof Error ? err.message : String(err);
      }
    }
    fill(
      more,
      s.Steps?.length ? [h('h3', {}, 'Steps'), stepsTable(s.Steps)] : null,
      s.LastRuns.length ? [h('h3', {}, `Last ${s.LastRuns.length} runs`), runsTable(s.LastRuns)] : null,
    );
  })();
  return section;
}
