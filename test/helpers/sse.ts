import { type IncomingMessage, request } from 'node:http';
import { HANG_MS, waitFor } from './wait.ts';

/** One Server-Sent Event as a browser's EventSource sees it. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read event fields as a client does
  data: any;
}

export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  events: SseEvent[];
  /** Comment lines received (`: ping`). */
  comments: string[];
  /** Whether the server ended the stream. */
  ended: boolean;
  /** Waits until `pick` finds something in the events received so far. */
  until<T>(what: string, pick: (events: SseEvent[]) => T | undefined, timeoutMs?: number): Promise<T>;
  close(): void;
}

/**
 * Opens `url` with node's http client and parses the event stream as the SSE specification says (fields up to a
 * blank line; `data` lines joined; `:` lines are comments). Resolves once the response headers arrived.
 */
export function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        comments: [],
        ended: false,
        until: (what, pick, timeoutMs = HANG_MS) => waitFor(what, async () => pick(client.events), timeoutMs, 20),
        close: () => req.destroy(),
      };
      let buffer = '';
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (client.status !== 200) {
          body += chunk;
          return;
        }
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const e: { id?: string; event: string; data: string[] } = { event: 'message', data: [] };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
            const m = /^([a-z]+): ?(.*)$/.exec(line);
            if (!m) continue;
            if (m[1] === 'id') e.id = m[2];
            if (m[1] === 'event') e.event = m[2] as string;
            if (m[1] === 'data') {
              e.data.push(m[2] as string);
              isEvent = true;
            }
          }
          if (isEvent) client.events.push({ id: e.id, event: e.event, data: JSON.parse(e.data.join('\n')) });
        }
      });
      res.on('end', () => {
        client.ended = true;
        if (client.status !== 200) client.events.push({ id: undefined, event: 'error', data: JSON.parse(body) });
      });
      res.on('error', () => {
        client.ended = true;
      });
      resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}
