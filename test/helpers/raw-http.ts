import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';

/** What came back on a raw connection: the first response (if any) and whether the server closed the connection. */
export interface RawAnswer {
  status: number | undefined;
  headers: Record<string, string>;
  body: string;
  closed: boolean;
}

/** Parses the first HTTP/1.1 response in `text` (Content-Length bodies, or everything up to the close). */
export function parseResponse(text: string, closed: boolean): RawAnswer {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { status: undefined, headers: {}, body: '', closed };
  const [line, ...fields] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const f of fields) {
    const i = f.indexOf(':');
    if (i > 0) headers[f.slice(0, i).trim().toLowerCase()] = f.slice(i + 1).trim();
  }
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  const rest = text.slice(end + 4);
  const body = length === undefined ? rest : Buffer.from(rest).subarray(0, length).toString();
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(line ?? '')?.[1]), headers, body, closed };
}

/** A connection to the server that collects what it answers. */
export class RawClient {
  readonly socket: Socket;
  private received = '';
  closed = false;
  readonly done: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => {
      this.received += d;
    });
    this.socket.on('error', () => {});
    this.done = new Promise((resolve) =>
      this.socket.once('close', () => {
        this.closed = true;
        resolve();
      }),
    );
  }

  /** Writes unless the connection is gone; false once it is. */
  write(data: string | Buffer): Promise<boolean> {
    if (this.closed || this.socket.destroyed || !this.socket.writable) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.socket.write(data, (err) => resolve(!err));
    });
  }

  answer(): RawAnswer {
    return parseResponse(this.received, this.closed);
  }

  /** Waits for a whole response (headers, and the body its Content-Length announces) or the close. */
  async response(timeoutMs = 30_000): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const a = this.answer();
      if (this.closed || (a.status !== undefined && Buffer.byteLength(a.body) >= Number(a.headers['content-length'])))
        return a;
      if (Date.now() > deadline) throw new Error(`no response within ${timeoutMs} ms; got ${JSON.stringify(a)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * The next whole response on a keep-alive connection (headers and the body its Content-Length announces), taken
   * off what was received so that the following call reads the one after it. Fails after `timeoutMs`.
   */
  async next(what: string, timeoutMs = 30_000): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const head = this.received.indexOf('\r\n\r\n');
      const a = parseResponse(this.received, false);
      const length = Number(a.headers['content-length'] ?? 0);
      const bodyBytes = Buffer.byteLength(this.received.slice(head + 4), 'latin1');
      if (a.status !== undefined && bodyBytes >= length) {
        this.received = Buffer.from(this.received, 'latin1')
          .subarray(Buffer.byteLength(this.received.slice(0, head + 4), 'latin1') + length)
          .toString('latin1');
        return a;
      }
      if (Date.now() > deadline) throw new Error(`${what}: no whole response within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Sends `bytes` on a new connection and returns the first response once the server closed it or answered. */
export async function rawExchange(port: number, bytes: string | Buffer, timeoutMs = 30_000): Promise<RawAnswer> {
  const c = new RawClient(port);
  await c.write(bytes);
  try {
    return await c.response(timeoutMs);
  } finally {
    c.close();
  }
}

/** The JSON interface's error record `{code, message}` and nothing else. */
export function assertJsonError(a: RawAnswer, status: number): void {
  assert.equal(a.status, status, JSON.stringify(a));
  assert.match(a.headers['content-type'] ?? '', /^application\/json/);
  const j = JSON.parse(a.body);
  assert.deepEqual(Object.keys(j).sort(), ['code', 'message'], a.body);
  assert.equal(j.code, String(status));
  assert.equal(typeof j.message, 'string');
}

/** The XML interface's `<error>` document. */
export function assertXmlError(a: RawAnswer, status: number): void {
  assert.equal(a.status, status, JSON.stringify(a));
  assert.match(a.headers['content-type'] ?? '', /^text\/xml/);
  assert.match(a.body, new RegExp(`<error>\\s*<code>${status}</code>\\s*<message>[^<]+</message>\\s*</error>`), a.body);
}
