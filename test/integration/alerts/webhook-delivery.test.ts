import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { LookupAll } from '../../../src/alerts/ssrf.ts';
import { postWebhook, verifyWebhookSignature } from '../../../src/alerts/webhook.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

const SECRET = 'test-webhook-secret-0123456789';
const LOCAL = ['127.0.0.1'];
const answer =
  (address: string): LookupAll =>
  async () => [{ address, family: address.includes(':') ? 6 : 4 }];

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

describe('webhook delivery', () => {
  let hook: WebhookReceiver;
  before(async () => {
    hook = await startWebhookReceiver();
  });
  after(() => hook.close());

  test('a signed JSON POST arrives and its signature verifies', async () => {
    const alert = { alert: 'Job 42 reached Error', partition: 'GLOBAL' };
    await postWebhook({ url: `${hook.url}?team=ops`, body: alert, secret: SECRET, allow: LOCAL });
    const d = hook.deliveries.at(-1);
    assert.ok(d);
    assert.deepEqual(d.json, alert);
    assert.equal(d.headers['content-type'], 'application/json');
    assert.equal(d.headers['user-agent'], 'Millrace');
    const ts = d.headers['x-millrace-timestamp'] as string;
    assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60);
    assert.ok(verifyWebhookSignature(SECRET, ts, d.body, d.headers['x-millrace-signature'] as string, 300));
    assert.ok(
      !verifyWebhookSignature('another-secret-0123456789', ts, d.body, d.headers['x-millrace-signature'] as string),
    );
  });

  test('the connection goes to the checked address while Host keeps the name', async () => {
    const before = hook.deliveries.length;
    const url = `http://hooks.test:${hook.port}/hook`;
    await postWebhook({ url, body: {}, secret: SECRET, allow: ['hooks.test'], lookup: answer('127.0.0.1') });
    assert.equal(hook.deliveries.length, before + 1);
    assert.equal(hook.deliveries.at(-1)?.headers.host, `hooks.test:${hook.port}`);
  });

  test('without the allow-list a local receiver is refused before connecting', async () => {
    const before = hook.deliveries.length;
    await assert.rejects(
      postWebhook({ url: hook.url, body: {}, secret: SECRET, allow: [] }),
      /loopback address \(127\.0\.0\.1\)/,
    );
    assert.equal(hook.deliveries.length, before);
  });

  test('a name that now resolves to a private address is blocked at send time', async () => {
    const url = `http://rebind.test:${hook.port}/hook`;
    await assert.rejects(
      postWebhook({ url, body: {}, secret: SECRET, allow: [], lookup: answer('10.0.0.7') }),
      /resolves to a private address \(10\.0\.0\.7\)/,
    );
    await assert.rejects(
      postWebhook({ url, body: {}, secret: SECRET, allow: [], lookup: answer('127.0.0.1') }),
      /resolves to a loopback address/,
    );
  });

  test('a non-2xx answer throws; the outbox can retry until it succeeds', async () => {
    const flaky = await startWebhookReceiver({ status: (n) => (n <= 2 ? 500 : 204) });
    try {
      const send = () => postWebhook({ url: flaky.url, body: { n: 1 }, secret: SECRET, allow: LOCAL });
      await assert.rejects(send(), /answered 500/);
      await assert.rejects(send(), /answered 500/);
      await send();
      assert.deepEqual(
        flaky.deliveries.map((d) => d.status),
        [500, 500, 204],
      );
    } finally {
      await flaky.close();
    }
  });

  test('a redirect, to a private address or anywhere, is not followed', async () => {
    const inner = await startWebhookReceiver();
    const targets = ['http://10.0.0.1/admin', 'http://169.254.169.254/latest/meta-data/', inner.url];
    try {
      for (const location of targets) {
        const redirecting = await startWebhookReceiver({ status: 302, headers: { Location: location } });
        try {
          await assert.rejects(
            postWebhook({ url: redirecting.url, body: {}, secret: SECRET, allow: LOCAL }),
            /answered 302; redirects are not followed/,
          );
          assert.equal(redirecting.deliveries.length, 1);
        } finally {
          await redirecting.close();
        }
      }
      assert.equal(inner.deliveries.length, 0);
    } finally {
      await inner.close();
    }
  });

  test('a receiver that does not answer in time fails the attempt', async () => {
    const slow = await startWebhookReceiver({ delayMs: 5_000 });
    try {
      await assert.rejects(
        postWebhook({ url: slow.url, body: {}, secret: SECRET, allow: LOCAL, timeoutMs: 200 }),
        /did not answer within 0\.2 s/,
      );
    } finally {
      await slow.close();
    }
  });

  test('a receiver that is not there fails the attempt', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/hook`;
    await assert.rejects(
      postWebhook({ url, body: {}, secret: SECRET, allow: LOCAL }),
      /could not be reached \(ECONNREFUSED\)/,
    );
  });
});
