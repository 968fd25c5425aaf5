/**
 * A time window's open days, month by month: `GET {base}/TimeWindow/<key>/openings` over 3 or 12 whole months
 * (the server's limit is 366 days), a day shaded when the window is open at some moment of it, in the window's
 * zone. Previous and next move by the months shown.
 */
import { api, withQuery } from './api.js';
import { civilIn, dayKey, openDays, parseWireDate, zoneOfWire } from './dates.js';
import { fill, h } from './dom.js';
import { errorText } from './format.js';
import { serverNow } from './session.js';
/** @import { Opening, Page } from './api-types.js' */

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const MONTH_NAME = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const DAY_NAME = new Intl.DateTimeFormat('en', { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' });

/**
 * Month `index` counted from January of year 0, and back.
 * @param {number} year
 * @param {number} month
 */
const monthIndex = (year, month) => year * 12 + (month - 1);
/** @param {number} i */
const ofIndex = (i) => ({ year: Math.floor(i / 12), month: (i % 12) + 1 });
/**
 * `2026/12/01 00:00 Europe/Amsterdam`: the first moment of a month in the window's zone (the server's zone if none).
 * @param {number} i
 * @param {string | null} zone
 */
const monthStart = (i, zone) => {
  const { year, month } = ofIndex(i);
  return `${year}/${String(month).padStart(2, '0')}/01 00:00${zone ? ` ${zone}` : ''}`;
};

/**
 * @param {number} i  the month's index
 * @param {Set<string>} open  the open days (`YYYY-MM-DD`)
 */
function monthTable(i, open) {
  const { year, month } = ofIndex(i);
  const first = new Date(Date.UTC(year, month - 1, 1));
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const lead = (first.getUTCDay() + 6) % 7; // Monday first
  /** @type {(number | null)[]} */
  const cells = [...Array.from({ length: lead }, () => null), ...Array.from({ length: days }, (_, d) => d + 1)];
  const weeks = [];
  for (let w = 0; w < cells.length; w += 7) weeks.push(cells.slice(w, w + 7));
  return h(
    'table',
    { class: 'month', 'data-month': dayKey(year, month, 1).slice(0, 7) },
    h('caption', {}, MONTH_NAME.format(first)),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        WEEKDAYS.map((d) => h('th', { scope: 'col' }, d)),
      ),
    ),
    h(
      'tbody',
      {},
      weeks.map((week) =>
        h(
          'tr',
          {},
          week.map((day) => {
            if (day === null) return h('td', {});
            const key = dayKey(year, month, day);
            const isOpen = open.has(key);
            const name = `${DAY_NAME.format(new Date(Date.UTC(year, month - 1, day)))}: ${isOpen ? 'open' : 'closed'}`;
            return h('td', { class: isOpen ? 'open' : null, 'data-date': key, title: name, 'aria-label': name }, day);
          }),
        ),
      ),
    ),
  );
}

/**
 * The calendar of window `key` (its TimeZone `zone`, or null); `element` goes on the page.
 * @param {string} key
 * @param {string | null} zone
 */
export function monthCalendar(key, zone) {
  const here = zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const now = civilIn(here, serverNow());
  let start = monthIndex(now.year, now.month);
  let count = 3;
  let generation = 0;
  const months = h('div', { class: 'months', id: 'calendar' });
  const info = h('p', { class: 'muted small', role: 'status' });
  const span = h('select', { id: 'calendar-months', 'aria-label': 'Months shown' });
  span.append(h('option', { value: '3' }, '3 months'), h('option', { value: '12' }, '12 months'));
  span.addEventListener('change', () => {
    count = Number(span.value);
    void load();
  });
  const move = (/** @type {number} */ by) => () => {
    start += by * count;
    void load();
  };
  const controls = h(
    'div',
    { class: 'pager' },
    h('button', { type: 'button', id: 'calendar-previous', onclick: move(-1) }, '← Previous'),
    h('button', { type: 'button', id: 'calendar-next', onclick: move(1) }, 'Next →'),
    span,
    info,
  );

  async function load() {
    const mine = ++generation;
    info.textContent = 'Loading…';
    const path = `/TimeWindow/${encodeURIComponent(key)}/openings`;
    try {
      /** @type {Page<Opening>} */
      const res = await api(
        'GET',
        withQuery(path, { From: monthStart(start, zone), Until: monthStart(start + count, zone) }),
      );
      if (mine !== generation) return;
      const items = res.items ?? [];
      const dayZone = zone ?? (items[0] ? zoneOfWire(items[0].From) : here);
      const open = openDays(
        items.map((o) => ({ from: parseWireDate(o.From), until: parseWireDate(o.Until) })),
        dayZone,
      );
      fill(
        months,
        Array.from({ length: count }, (_, n) => monthTable(start + n, open)),
      );
      info.textContent = `${open.size} open ${open.size === 1 ? 'day' : 'days'} shown (days in ${dayZone}).`;
    } catch (err) {
      if (mine === generation) info.textContent = errorText(err);
    }
  }

  void load();
  return { element: h('section', {}, h('h2', {}, 'Calendar'), controls, months) };
}
