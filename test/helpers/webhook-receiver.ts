import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebhookDelivery {
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as signed. */
  body: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
  /** The status it was answered with. */
  status: number;
}

export interface WebhookReceiverOptions {
  /** The status to answer, or a function of the delivery's number (1-based): `(n) => (n <= 2 ? 500 : 200)`. */
  status?: number | ((n: number) => number);
  /** Extra response headers, e.g. a Location for a redirect. */
  headers?: Record<string, string>;
  /** Answer only after this long (to test timeouts). */
  delayMs?: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  port: number;
  /** Every request received, answered with any status, in order. */
  deliveries: WebhookDelivery[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 port 0 that records what webhooks deliver. */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const deliveries: WebhookDelivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const n = deliveries.length + 1;
      const status = typeof options.status === 'function' ? options.status(n) : (options.status ?? 200);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      deliveries.push({ headers: req.headers, body, json, status });
      const answer = () => {
        res.writeHead(status, { 'Content-Type': 'text/plain', ...options.headers });
        res.end(`${status}\n`);
      };
      if (!options.delayMs) return answer();
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, options.delayMs);
      timers.add(timer);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    deliveries,
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
