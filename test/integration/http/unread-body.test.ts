import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, basicAuth, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * A body the server will not read to its end (past the limit, or from a caller without the right to send it), sent
 * chunked by an ordinary client that goes on writing until the server stops it: the client gets the answer, 413 or
 * 403 in the interface's record, never EPIPE or a reset instead; the server reads at most a few MiB of the 100 MB
 * and closes the connection after the answer. Real sockets, Node's own HTTP client and fetch, several times each:
 * a server that resets the connection as soon as it has answered loses the answer to some of them.
 */

const TOTAL = 100 * 1024 * 1024;
/** What the server may read of a body it refuses: the 1 MiB limit, what is in flight, and a margin. */
const MAX_READ = 4 * 1024 * 1024;
const VIEWER_PASSWORD = 'viewer-password-0123';

interface Outcome {
  status: number | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The client's error, when it had one (after the answer, a write to the closed connection). */
  error?: string;
}

/**
 * The uploader, in a process of its own as a client is (in the server's process the answer and the reset are never
 * in a race): Node's http client writing 100 MB chunked until it is done or refused, or fetch with a 100 MB stream.
 * Prints what it got.
 */
const CLIENT = `
const [mode, url, method, headersText, total] = process.argv.slice(1);
const headers = JSON.parse(headersText);
const chunk = Buffer.alloc(65536, 0x20);
const out = { status: undefined, headers: {}, body: '' };
const done = () => { process.stdout.write(JSON.stringify(out)); process.exit(0); };
if (mode === 'fetch') {
  delete headers['Transfer-Encoding']; // fetch sends a stream chunked by itself, and refuses the header
  let sent = 0;
  const body = new ReadableStream({ pull(c) { if (sent >= Number(total)) c.close(); else { sent += chunk.length; c.enqueue(new Uint8Array(chunk)); } } });
  fetch(url, { method, body, headers, duplex: 'half' }).then(async (res) => {
    out.status = res.status; out.headers = Object.fromEntries(res.headers); out.body = await res.text(); done();
  }, (e) => { out.error = e.message + ' ' + (e.cause?.code ?? ''); done(); });
} else {
  const { request } = await import('node:http');
  const req = request(url, { method, headers, agent: false }, (res) => {
    out.status = res.statusCode; out.headers = res.headers; res.setEncoding('utf8');
    res.on('data', (d) => { out.body += d; }); res.on('end', done); res.on('error', done);
  });
  req.on('error', (e) => { out.error = e.message; setTimeout(done, 500); });
  let sent = 0;
  const pump = () => {
    while (sent < Number(total) && !req.destroyed) { sent += chunk.length; if (!req.write(chunk)) { req.once('drain', pump); return; } }
    if (!req.destroyed) req.end();
  };
  pump();
}
`;

function upload(
  mode: 'http' | 'fetch',
  url: string,
  method: string,
  headers: Record<string, string>,
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', CLIENT, mode, url, method, JSON.stringify(headers), String(TOTAL)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      text += d;
    });
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(text) as Outcome);
      } catch {
        reject(new Error(`the client printed ${JSON.stringify(text)}`));
      }
    });
  });
}

for (const backend of backends().slice(0, 1)) {
  describe(`a body the server does not read (${backend.name})`, () => {
    let t: TestServer;
    let port = 0;
    /** The server's side of every connection, by the client's port, with what it read once closed. */
    const read = new Map<number, Promise<number>>();

    before(async () => {
      t = await startTestServer(backend, { localAgent: false }, { listen: true });
      port = (t.server.app.server.address() as { port: number }).port;
      t.server.app.server.on('connection', (s: Socket) => {
        read.set(s.remotePort ?? 0, new Promise((resolve) => s.once('close', () => resolve(s.bytesRead))));
      });
      await t.server.accounts.addUser('viewer', { password: VIEWER_PASSWORD, roles: ['Viewer'] });
    });
    after(() => t?.close());

    /** Every connection this test opened is closed by the server, each having read at most MAX_READ bytes. */
    const readByAll = async (): Promise<number[]> => {
      const sizes = await Promise.all(read.values());
      read.clear();
      return sizes;
    };

    const json = { 'X-API-Key': ADMIN_KEY, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' };
    const xml = { 'Content-Type': 'application/xml', 'Transfer-Encoding': 'chunked' };

    test('100 MB chunked to a JSON route with a key: 413 in the JSON record, a few MiB read, connection closed', async () => {
      const url = `http://127.0.0.1:${port}${t.base}/Queue/GLOBAL.Big`;
      const outcomes: Outcome[] = [];
      for (const mode of ['http', 'fetch'] as const)
        for (let i = 0; i < 4; i++) outcomes.push(await upload(mode, url, 'POST', json));
      for (const [i, o] of outcomes.entries()) {
        assert.equal(o.status, 413, `attempt ${i}: ${JSON.stringify(o)}`);
        assert.deepEqual(JSON.parse(o.body), {
          code: '413',
          message: 'The body is larger than the limit of 1048576 bytes',
        });
        assert.equal(o.headers.connection, 'close', `attempt ${i}`);
      }
      const sizes = await readByAll();
      assert.equal(sizes.length, outcomes.length, 'one connection each, each closed by the server');
      for (const n of sizes) assert.ok(n < MAX_READ, `the server read ${n} bytes of a body past its limit`);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Big')).status, 404, 'nothing was stored');
    });

    test('100 MB chunked to xml-put: 413 in the XML record; from a Viewer to jar-put and xml-put: 403', async () => {
      const cases: Array<[string, string, Record<string, string>, number]> = [
        ['/xml', 'admin', {}, 413],
        ['/jar', 'viewer', { 'X-Vendor-Library': 'GLOBAL.L', 'X-Vendor-FileName': 'a.jar' }, 403],
        ['/xml', 'viewer', {}, 403],
      ];
      for (const [service, user, extra, status] of cases) {
        const password = user === 'admin' ? ADMIN_PASSWORD : VIEWER_PASSWORD;
        const headers = { ...xml, ...extra, Authorization: basicAuth(user, password) };
        const url = `http://127.0.0.1:${port}${t.xmlBase}${service}`;
        for (const o of [await upload('http', url, 'PUT', headers), await upload('fetch', url, 'PUT', headers)]) {
          assert.equal(o.status, status, `${user} ${service}: ${JSON.stringify(o)}`);
          assert.match(o.body, new RegExp(`^<\\?xml[^>]*>\\s*<error>\\s*<code>${status}</code>`), o.body);
          assert.equal(o.headers.connection, 'close');
        }
      }
      for (const n of await readByAll()) assert.ok(n < MAX_READ, `the server read ${n} bytes of a body it refused`);
    });
  });
}
