/**
 * The events of one event definition (`GET {base}/Event?EventDefinition=<key>`), newest first, with Delete on the
 * Cleared ones for whoever may delete (`DELETE {base}/Event/<eventId>`; the server refuses a Raised or Pending one).
 */
import { api, withQuery } from './api.js';
import { confirmAction } from './confirm.js';
import { fill, h, notice } from './dom.js';
import { errorText, statusClass, text } from './format.js';
import { can } from './session.js';
/** @import { MillraceEvent, Page } from './api-types.js' */

const PAGE = 50;

/**
 * A section that lists the definition's events and reloads itself after a delete; "More" reads the next page.
 * @param {string} definition  the business key `<partition>.<name>`
 * @param {string} partition
 * @returns {HTMLElement}
 */
export function eventList(definition, partition) {
  const body = h('tbody', {});
  const more = h('button', { type: 'button', hidden: true }, 'More');
  const status = h('p', { class: 'muted' });
  const mayDelete = can('EventDefinition', partition, 'Delete');
  /** @type {string | null} */
  let next = null;

  /** @param {MillraceEvent} e */
  const row = (e) =>
    h(
      'tr',
      { 'data-event': e.eventId },
      h('td', {}, e.eventId),
      h('td', {}, h('span', { class: statusClass(e.Status) }, e.Status)),
      h('td', {}, text(e.RaiseTime)),
      h('td', {}, text(e.RaiserObject)),
      h('td', {}, text(e.ClearTime)),
      h(
        'td',
        {},
        mayDelete && e.Status === 'Cleared'
          ? h('button', { type: 'button', class: 'danger', onclick: () => void remove(e.eventId) }, 'Delete')
          : null,
      ),
    );

  /** @param {boolean} fromStart */
  async function load(fromStart) {
    try {
      /** @type {Page<MillraceEvent>} */
      const page = await api(
        'GET',
        withQuery('/Event', {
          EventDefinition: definition,
          Limit: PAGE,
          ...(fromStart || !next ? {} : { After: next }),
        }),
      );
      if (fromStart) fill(body);
      for (const e of page.items) body.appendChild(row(e));
      next = page.next ?? null;
      more.hidden = next === null;
      status.textContent = body.children.length ? '' : 'No event has been raised.';
    } catch (err) {
      status.textContent = errorText(err);
    }
  }

  /** @param {string} eventId */
  async function remove(eventId) {
    if (!(await confirmAction(`Delete event ${eventId}?`, 'Delete'))) return;
    try {
      await api('DELETE', `/Event/${encodeURIComponent(eventId)}`);
      notice(`Event ${eventId} deleted`);
      await load(true);
    } catch (err) {
      notice(errorText(err), 'error');
    }
  }

  more.addEventListener('click', () => void load(false));
  void load(true);
  return h(
    'section',
    { id: 'event-list' },
    h('h2', {}, 'Events'),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Event', 'Status', 'Raised', 'By', 'Cleared', ''].map((c) => h('th', {}, c)),
        ),
      ),
      body,
    ),
    status,
    more,
  );
}
