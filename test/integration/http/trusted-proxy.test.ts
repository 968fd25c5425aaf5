import assert from 'node:assert/strict';
import { type ClientRequest, request } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { DEFAULTS } from '../../../src/config/config.ts';
import { backends } from '../../helpers/backends.ts';
import { requestFrom } from '../../helpers/from-address.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * `--trust-proxy` (docs/architecture.md §10): from a trusted proxy the client is the rightmost address of
 * X-Forwarded-For the proxy appended, for the sign-in limiter, the access log and the per-address caps; from any
 * other peer the header is ignored. The test is the proxy: requests bound to 127.0.0.2 (trusted) and 127.0.0.3 (not).
 */
const PROXY = '127.0.0.2';
const STRANGER = '127.0.0.3';
const FAILURES = 3;
const CAP = 2;

for (const backend of backends()) {
  describe(`a trusted proxy's X-Forwarded-For (${backend.name})`, () => {
    let t: TestServer;
    let origin = '';
    let log = '';
    const open: ClientRequest[] = [];
    const url = (path: string) => `${origin}${t.base}${path}`;
    /** A request with a wrong API key from `peer`, naming `forwarded` as the client. */
    const badKey = async (peer: string, forwarded: string) =>
      (
        await requestFrom(peer, url('/Partition/GLOBAL'), {
          headers: { 'X-API-Key': 'not-a-key', 'X-Forwarded-For': forwarded },
        })
      ).status;
    /** The client addresses of the access log's lines. */
    const logged = () =>
      log
        .split('\n')
        .filter((l) => l.includes('"msg":"request"'))
        .map((l) => (JSON.parse(l) as { client: string }).client);

    before(async () => {
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          log += chunk.toString('utf8');
          done();
        },
      });
      t = await startTestServer(
        backend,
        {
          trustProxy: [PROXY, '192.0.2.0/24'],
          authFailuresPerMinute: FAILURES,
          limits: { ...DEFAULTS.limits, maxEventLoopDelayMs: 60_000, maxConnectionsPerAddress: CAP },
        },
        { listen: true, logger: pino({ level: 'info' }, sink) },
      );
      const { port } = t.server.app.server.address() as { port: number };
      origin = `http://127.0.0.1:${port}`;
    });
    after(async () => {
      for (const r of open) r.destroy();
      await t.close();
    });

    test('through the trusted proxy, the limiter counts the forwarded client, not the proxy', async () => {
      for (let i = 0; i < FAILURES; i++) assert.equal(await badKey(PROXY, '10.1.1.1'), 401);
      assert.equal(await badKey(PROXY, '10.1.1.1'), 429, 'the forwarded client is refused');
      assert.equal(await badKey(PROXY, '10.1.1.2'), 401, 'another client of the same proxy is not');
      // The proxy appends the peer it saw: what the client wrote itself lies to its left and is not believed.
      assert.equal(await badKey(PROXY, '10.1.1.1, 10.7.7.7'), 401, 'a client claiming to be 10.1.1.1 is 10.7.7.7');
      assert.equal(await badKey(PROXY, '10.7.7.7, 10.1.1.1'), 429);
      const ok = await requestFrom(PROXY, url('/Partition/GLOBAL'), {
        headers: { 'X-API-Key': ADMIN_KEY, 'X-Forwarded-For': '10.1.1.3' },
      });
      assert.equal(ok.status, 200, 'the proxy itself is not limited');
    });

    test('from an untrusted peer, X-Forwarded-For is ignored: the peer is the client', async () => {
      for (let i = 0; i < FAILURES; i++) assert.equal(await badKey(STRANGER, `10.3.3.${i + 1}`), 401);
      assert.equal(await badKey(STRANGER, '10.4.4.4'), 429, 'its own address is refused whatever it claims');
      assert.equal(await badKey(PROXY, '10.3.3.1'), 401, 'the addresses it named never failed');
    });

    test('the access log names the forwarded client through the proxy, and the peer otherwise', async () => {
      // A line is written once its answer has gone out: the last request's line may follow its answer.
      await waitFor('the last request logged', async () => (logged().includes('10.3.3.1') ? true : undefined));
      const clients = logged();
      assert.ok(clients.includes('10.1.1.1'), JSON.stringify(clients));
      assert.ok(clients.includes('10.7.7.7'));
      assert.ok(clients.includes(STRANGER));
      for (const claimed of ['10.3.3.2', '10.3.3.3', '10.4.4.4'])
        assert.ok(!clients.includes(claimed), `nothing a stranger claimed (${claimed})`);
      assert.ok(!clients.includes(PROXY), 'never the proxy for what it forwarded');
    });

    test("a trusted proxy's X-Forwarded-Proto: https makes the session cookie Secure; a stranger's does not", async () => {
      const signIn = async (peer: string) => {
        const res = await requestFrom(peer, `${origin}/millrace/ui/api/session`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            origin,
            'X-Forwarded-Proto': 'https',
            'X-Forwarded-For': '10.8.8.8',
          },
          body: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }),
        });
        assert.equal(res.status, 200, res.body);
        return String(res.headers['set-cookie']);
      };
      assert.match(await signIn(PROXY), /millrace_session=.*; Secure/);
      assert.doesNotMatch(await signIn('127.0.0.4'), /Secure/);
    });

    test('the per-address cap counts the requests each forwarded client holds open, not the proxy', async () => {
      // Live feeds stay open: CAP of them for one client through the proxy.
      const stream = (client: string) =>
        new Promise<number>((resolve, reject) => {
          const req = request(
            url('/stream'),
            { localAddress: PROXY, agent: false, headers: { 'X-API-Key': ADMIN_KEY, 'X-Forwarded-For': client } },
            (res) => {
              resolve(res.statusCode ?? 0);
              if (res.statusCode !== 200) res.resume();
            },
          );
          req.on('error', reject);
          open.push(req);
          req.end();
        });
      for (let i = 0; i < CAP; i++) assert.equal(await stream('10.5.5.5'), 200);
      const over = await requestFrom(PROXY, url('/Partition/GLOBAL'), {
        headers: { 'X-API-Key': ADMIN_KEY, 'X-Forwarded-For': '10.5.5.5' },
      });
      assert.equal(over.status, 503, over.body);
      assert.equal(JSON.parse(over.body).code, '503');
      assert.match(JSON.parse(over.body).message, /Too many requests at once from your address/);
      // The proxy holds CAP connections already and opens more for its other clients.
      assert.equal(await stream('10.6.6.6'), 200);
      const other = await requestFrom(PROXY, url('/Partition/GLOBAL'), {
        headers: { 'X-API-Key': ADMIN_KEY, 'X-Forwarded-For': '10.6.6.7' },
      });
      assert.equal(other.status, 200, other.body);
      for (const r of open.splice(0)) r.destroy();
    });
  });
}
