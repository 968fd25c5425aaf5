import { JSON_BASE } from './cli.ts';

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON the server answers
  json: any;
  body: string;
}

/** Did `fetch` fail because the kept-alive connection it picked had been closed by the server? */
const staleConnection = (err: unknown): boolean =>
  err instanceof TypeError && err.cause instanceof Error && 'code' in err.cause && err.cause.code === 'UND_ERR_SOCKET';

/**
 * `fetch`, with a GET or HEAD sent once more when the kept-alive connection it picked turns out closed. The server
 * closes a connection idle for its keep-alive timeout (5 s); a test that holds its own event loop longer (hashing
 * 256 MiB to check a job's output) has not yet read that close when it sends its next request on the connection.
 * A browser or curl sends such an idempotent request again, on a new connection, and so does this.
 */
export async function fetchRetryingStale(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const method = (init.method ?? 'GET').toUpperCase();
    if ((method === 'GET' || method === 'HEAD') && staleConnection(err)) return fetch(url, init);
    throw err;
  }
}

/** A client of a `millrace serve` process on 127.0.0.1:`port`, as an outside system would use it. */
export function apiClient(port: number, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<ApiResponse> => {
    const res = await fetchRetryingStale(`http://127.0.0.1:${port}${JSON_BASE}${path}`, {
      method,
      headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000), // only a hang
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, json, body: text };
  };
}

/** A TCP port that was free a moment ago, for a server that must come back on the same port after a crash. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
