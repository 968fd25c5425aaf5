import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JSON_BASE, killServers, startServe } from '../../helpers/cli.ts';
import { until } from '../../helpers/processes.ts';
import { RawClient } from '../../helpers/raw-http.ts';

/**
 * SIGTERM with requests in flight (`--shutdown-grace`): the server takes no new connection, answers what is in
 * flight and what still arrives on open connections, says it is not ready (`/health/ready` 503), and once the grace
 * is over exits anyway (exit code 1) although a request is still unfinished.
 */

const KEY = 'grace-test-admin-key-0123456789ab';
/** Long enough for a loaded machine to answer what the test sends meanwhile; the test waits that long once. */
const GRACE_S = 15;

const submitHead = (length: number) =>
  `POST ${JSON_BASE}/Job/GLOBAL.System_Sleep?fields=jobId,Status HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('SIGTERM with requests in flight', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-grace-'));
  });
  after(async () => {
    await killServers();
    await rm(dir, { recursive: true, force: true });
  });

  test('requests in flight are answered and readiness is 503 during the grace; then the process exits anyway', async (t) => {
    const server = await startServe(['--data', dir, '--shutdown-grace', String(GRACE_S), '--no-local-agent'], {
      MILLRACE_ADMIN_API_KEY: KEY,
    });
    // Two submits in flight. One has sent half of its body and sends the rest after the SIGTERM. The other is a
    // slow upload that outlasts the grace: its body (JSON padded with spaces) comes at 3 KB/s, above the
    // server's minimum body rate, and would take minutes.
    const body = JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] });
    const half = Math.floor(body.length / 2);
    const finished = new RawClient(server.port);
    finished.socket.write(submitHead(body.length) + body.slice(0, half));
    const stuck = new RawClient(server.port);
    stuck.socket.write(`${submitHead(900_000)}${body.slice(0, -1)}`);
    const trickle = setInterval(() => stuck.socket.write(' '.repeat(1500)), 500);
    t.after(() => clearInterval(trickle));
    // Answered after the server has read what was sent before it on the other connections: they are in flight.
    const ready = new RawClient(server.port);
    ready.socket.write('GET /health/ready HTTP/1.1\r\nHost: x\r\n\r\n');
    const before = await ready.next('readiness before the stop');
    assert.equal(before.status, 200, before.body);
    assert.deepEqual(JSON.parse(before.body), { status: 'ready' });
    ready.close();

    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    await until(() => /SIGTERM received, shutting down/.test(server.output()), 'the stop to begin', 30_000);

    // No new connection is taken.
    await until(
      () =>
        new Promise<boolean>((resolve) => {
          const probe = connect(server.port, '127.0.0.1');
          probe.once('connect', () => {
            probe.destroy();
            resolve(false);
          });
          probe.once('error', () => resolve(true));
        }),
      'the port to refuse new connections',
      30_000,
    );

    // The request in flight is answered, and the next one on its connection learns the server is not ready.
    finished.socket.write(body.slice(half));
    const submitted = await finished.next('the submit in flight');
    assert.equal(submitted.status, 201, submitted.body);
    assert.equal(typeof JSON.parse(submitted.body).jobId, 'number');
    finished.socket.write('GET /health/ready HTTP/1.1\r\nHost: x\r\n\r\n');
    const during = await finished.next('readiness while stopping');
    assert.equal(during.status, 503, during.body);
    assert.deepEqual(JSON.parse(during.body), { status: 'not ready', reason: 'the server is shutting down' });

    // The other request never ends: the grace is over, the process exits anyway (bounded to catch a hang).
    const code = await Promise.race([
      exited,
      new Promise<'hang'>((r) => setTimeout(() => r('hang'), GRACE_S * 1000 + 60_000)),
    ]);
    assert.equal(code, 1, server.output());
    assert.ok(Date.now() - started >= GRACE_S * 1000, 'not before the grace was over');
    assert.match(server.output(), new RegExp(`shutdown took longer than ${GRACE_S} s; exiting anyway`));
    clearInterval(trickle);
    finished.close();
    stuck.close();
  });
});
