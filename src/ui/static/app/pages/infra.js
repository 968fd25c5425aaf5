/**
 * Queues and process servers: jobs holding a slot against each one's limit, whether its agent is connected,
 * hold/release of a queue (`PUT {base}/Queue/<key>` with Held) and start/stop of a process server.
 */
import { api, uiApi } from '../api.js';
import { fill, h, notice } from '../dom.js';
import { onFeed } from '../feed.js';
import { errorText, text } from '../format.js';
import { can, partitionOf } from '../session.js';
/** @import { Load, ProcessServerLoad, QueueLoad } from '../api-types.js' */

/**
 * The page's state, handed to the functions below: the tables they fill and the timer of the next re-read.
 * @typedef {object} Board
 * @property {HTMLTableSectionElement} queues
 * @property {HTMLTableSectionElement} servers
 * @property {HTMLParagraphElement} error
 * @property {ReturnType<typeof setTimeout> | undefined} timer
 * @property {boolean} stopped
 */
/**
 * Runs an action (`fn`), then says `label` (or the refusal) and re-reads the board.
 * @typedef {(label: string, fn: () => Promise<unknown>) => Promise<void>} Act
 */

/** @param {QueueLoad | ProcessServerLoad} l */
const load = (l) => `${l.running} / ${l.limit ?? '∞'}`;

/** @param {HTMLElement} main */
export function renderInfra(main) {
  /** @type {Board} */
  const board = {
    queues: h('tbody', { id: 'queues' }),
    servers: h('tbody', { id: 'process-servers' }),
    error: h('p', { class: 'error' }),
    timer: undefined,
    stopped: false,
  };
  layOut(main, board);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let pending;
  const unsubscribe = onFeed((batch) => {
    if (batch.length === 0 || pending) return;
    pending = setTimeout(() => {
      pending = undefined;
      void refresh(board);
    }, 1000);
  });
  void refresh(board);
  return () => {
    board.stopped = true;
    clearTimeout(board.timer);
    clearTimeout(pending);
    unsubscribe();
  };
}

/**
 * @param {HTMLElement} main
 * @param {Board} board
 */
function layOut(main, board) {
  fill(
    main,
    h('h1', {}, 'Queues and process servers'),
    board.error,
    h('h2', {}, 'Queues'),
    table(['Queue', 'Description', 'Running / limit', 'State', ''], board.queues),
    h('h2', {}, 'Process servers'),
    table(['Process server', 'Description', 'Running / limit', 'Status', 'Agent', ''], board.servers),
  );
}

/**
 * @param {string[]} headings
 * @param {HTMLTableSectionElement} body
 */
function table(headings, body) {
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headings.map((c) => h('th', {}, c)),
      ),
    ),
    body,
  );
}

/** Re-reads the load of every queue and process server, then again in 5 s until the page is left. */
/** @param {Board} board */
async function refresh(board) {
  clearTimeout(board.timer);
  /** @type {Act} */
  const act = (label, fn) => perform(board, label, fn);
  try {
    /** @type {Load} */
    const r = await uiApi('GET', 'api/load');
    board.error.textContent = '';
    fill(
      board.queues,
      r.queues.map((q) => queueRow(q, act)),
    );
    fill(
      board.servers,
      r.processServers.map((s) => serverRow(s, act)),
    );
  } catch (err) {
    board.error.textContent = errorText(err);
  }
  if (!board.stopped) board.timer = setTimeout(() => refresh(board), 5000);
}

/**
 * Runs one action, says how it went, and re-reads the board.
 * @param {Board} board
 * @param {string} label
 * @param {() => Promise<unknown>} fn
 */
async function perform(board, label, fn) {
  try {
    await fn();
    notice(label);
  } catch (err) {
    notice(errorText(err), 'error');
  }
  void refresh(board);
}

/**
 * @param {QueueLoad} q
 * @param {Act} act
 */
function queueRow(q, act) {
  return h(
    'tr',
    { 'data-queue': q.key },
    h('td', {}, q.key),
    h('td', { class: 'desc' }, text(q.Description)),
    h('td', {}, load(q)),
    h('td', {}, q.Held ? h('span', { class: 'status st-wait' }, 'Held') : 'Open'),
    h(
      'td',
      {},
      can('Queue', partitionOf(q.key), 'Edit')
        ? h(
            'button',
            {
              type: 'button',
              onclick: () =>
                void act(`${q.key} ${q.Held ? 'released' : 'held'}`, () =>
                  api('PUT', `/Queue/${encodeURIComponent(q.key)}`, { Held: !q.Held }),
                ),
            },
            q.Held ? 'Release' : 'Hold',
          )
        : null,
    ),
  );
}

/**
 * @param {ProcessServerLoad} s
 * @param {Act} act
 */
function serverRow(s, act) {
  const stopped = s.DesiredStatus === 'Shutdown';
  return h(
    'tr',
    { 'data-process-server': s.key },
    h('td', {}, s.key),
    h('td', { class: 'desc' }, text(s.Description)),
    h('td', {}, load(s)),
    h('td', {}, text(s.Status)),
    h(
      'td',
      { class: 'agent' },
      s.key === 'GLOBAL.System' ? 'built in' : s.agentConnected ? 'connected' : 'not connected',
    ),
    h(
      'td',
      {},
      can('ProcessServer', partitionOf(s.key), 'Control') && s.key !== 'GLOBAL.System'
        ? h(
            'button',
            {
              type: 'button',
              class: stopped ? '' : 'danger',
              onclick: () =>
                void act(`${s.key} ${stopped ? 'started' : 'stopped'}`, () =>
                  api('PUT', `/ProcessServer/${encodeURIComponent(s.key)}/${stopped ? 'start' : 'stop'}`),
                ),
            },
            stopped ? 'Start' : 'Stop',
          )
        : null,
    ),
  );
}
