import type { FastifyInstance } from 'fastify';
import { invalid } from '../../errors.ts';
import type { Feed } from '../../feed/feed.ts';

type Req = { Querystring: Record<string, string> };

const EVENT_STREAM = {
  description:
    'Server-Sent Events: `job`, `operator-message`, `user-message`, `alert`, `process-server`, `ready` and `reset` events (README, "Job history and the live feed"), and `: ping` comments',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
};

/** The id to resume after: the Last-Event-ID header, else the `lastEventId` query parameter (for clients that cannot set headers). */
function lastEventId(header: string | string[] | undefined, query: Record<string, string>): number | undefined {
  for (const k of Object.keys(query)) if (k !== 'lastEventId') throw invalid(`Unknown query parameter "${k}"`);
  const text = typeof header === 'string' && header !== '' ? header : query.lastEventId;
  if (text === undefined || text === '') return undefined;
  if (!/^[0-9]{1,16}$/.test(text)) throw invalid(`Last-Event-ID "${text}" is not an event id`);
  return Number(text);
}

/** GET …/stream: the live feed of what the caller may view (src/feed/feed.ts). */
export function registerStreamRoute(app: FastifyInstance, feed: Feed, served: Map<string, Set<string>>): void {
  served.set('/stream', new Set(['GET']));
  app.get<Req>('/stream', {
    schema: {
      tags: ['Feed'],
      summary: 'Live feed of job status changes, messages, alerts and process servers (Server-Sent Events)',
      querystring: {
        type: 'object',
        properties: {
          lastEventId: {
            type: 'string',
            description: 'Resume after this event id, as the Last-Event-ID header does (which wins when both are sent)',
          },
        },
      },
      response: { 200: EVENT_STREAM },
    },
    handler: (req, reply) => {
      const after = lastEventId(req.headers['last-event-id'], req.query);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
        // Proxies such as nginx buffer responses unless told not to.
        'X-Accel-Buffering': 'no',
      });
      req.socket.setNoDelay(true);
      const unsubscribe = feed.subscribe(req.principal, after, {
        write: (text) => {
          if (!res.destroyed) res.write(text);
        },
        buffered: () => res.writableLength + (res.socket?.writableLength ?? 0),
        close: () => res.destroy(),
      });
      res.on('close', unsubscribe);
    },
  });
}
