/**
 * Queues and process servers: jobs holding a slot against each one's limit, whether its agent is connected,
 * hold/release of a queue (`PUT {base}/Queue/<key>` with Held) and start/stop of a process server.
 */
import { api, uiApi } from '../api.js';
import { fill, h, notice } from '../dom.js';
import { onFeed } from '../feed.js';
import { text } from '../format.js';
import { can, partitionOf } from '../session.js';

const load = (l) => `${l.running} / ${l.limit ?? '∞'}`;

export function renderInfra(main) {
  const queues = h('tbody', { id: 'queues' });
  const servers = h('tbody', { id: 'process-servers' });
  const error = h('p', { class: 'error' });
  let timer = null;
  let stopped = false;

  const act = async (label, fn) => {
    try {
      await fn();
      notice(label);
    } catch (err) {
      notice(err.message, 'error');
    }
    void refresh();
  };

  async function refresh() {
    clearTimeout(timer);
    try {
      const r = await uiApi('GET', 'api/load');
      error.textContent = '';
      fill(
        queues,
        r.queues.map((q) =>
          h(
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
          ),
        ),
      );
      fill(
        servers,
        r.processServers.map((s) => {
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
        }),
      );
    } catch (err) {
      error.textContent = err.message;
    }
    if (!stopped) timer = setTimeout(refresh, 5000);
  }

  fill(
    main,
    h('h1', {}, 'Queues and process servers'),
    error,
    h('h2', {}, 'Queues'),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Queue', 'Description', 'Running / limit', 'State', ''].map((c) => h('th', {}, c)),
        ),
      ),
      queues,
    ),
    h('h2', {}, 'Process servers'),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Process server', 'Description', 'Running / limit', 'Status', 'Agent', ''].map((c) => h('th', {}, c)),
        ),
      ),
      servers,
    ),
  );
  let pending = null;
  const unsubscribe = onFeed((batch) => {
    if (batch.length === 0 || pending) return;
    pending = setTimeout(() => {
      pending = null;
      void refresh();
    }, 1000);
  });
  void refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
    clearTimeout(pending);
    unsubscribe();
  };
}
