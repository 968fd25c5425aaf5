import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const webhook = (Address: string) => ({
  Recipients: [
    { Kind: 'Email', Address: 'ops@example.org' },
    { Kind: 'Webhook', Address },
  ],
});

for (const backend of backends()) {
  describe(`webhook targets are checked when an AlertEscalation is defined (S15, ${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('a loopback webhook → 400 naming the problem, and nothing stored', async () => {
      const res = await t.req('POST', '/AlertEscalation/GLOBAL.OnCall', { body: webhook('http://127.0.0.1:9/x') });
      assert.equal(res.status, 400, res.body);
      assert.equal(
        res.json.message,
        'Field "Recipients[1].Address": Webhook address http://127.0.0.1:9/x points to a loopback address (127.0.0.1); add it to MILLRACE_WEBHOOK_ALLOW to permit it',
      );
      assert.equal((await t.req('GET', '/AlertEscalation/GLOBAL.OnCall')).status, 404);
    });

    test('every internal target and other schemes → 400', async () => {
      const cases: Array<[string, RegExp]> = [
        ['http://[::1]/x', /loopback address \(::1\)/],
        ['http://169.254.169.254/latest/meta-data/', /link-local address \(169\.254\.169\.254\)/],
        ['http://10.0.0.1/x', /private address \(10\.0\.0\.1\)/],
        ['http://[::ffff:127.0.0.1]/x', /loopback address/],
        ['http://2130706433/x', /loopback address \(127\.0\.0\.1\)/],
        ['http://localhost:9/x', /resolves to a loopback address/],
        ['file:///etc/passwd', /must be an http or https URL/],
        ['gopher://127.0.0.1:70/_x', /must be an http or https URL/],
      ];
      for (const [address, message] of cases) {
        const res = await t.req('POST', '/AlertEscalation/GLOBAL.Bad', { body: webhook(address) });
        assert.equal(res.status, 400, `${address}: ${res.body}`);
        assert.match(res.json.message, message, address);
        assert.match(res.json.message, /Recipients\[1\]\.Address/, address);
      }
      assert.equal((await t.req('GET', '/AlertEscalation/GLOBAL.Bad')).status, 404);
    });

    test('changing a recipient to an internal webhook → 400, and the object stays as it was', async () => {
      const created = await t.req('POST', '/AlertEscalation/GLOBAL.Ops', {
        body: { Recipients: [{ Kind: 'Email', Address: 'ops@example.org' }] },
      });
      assert.equal(created.status, 201, created.body);
      const res = await t.req('PUT', '/AlertEscalation/GLOBAL.Ops', { body: webhook('http://10.0.0.1/hook') });
      assert.equal(res.status, 400, res.body);
      assert.match(res.json.message, /private address \(10\.0\.0\.1\)/);
      const got = await t.req('GET', '/AlertEscalation/GLOBAL.Ops');
      assert.deepEqual(
        got.json.Recipients.map((r: { Address: string }) => r.Address),
        ['ops@example.org'],
      );
    });
  });

  describe(`the webhook allow-list overrides the check (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend, { webhookAllow: ['127.0.0.1', '10.0.0.0/8'] });
    });
    after(() => t.close());

    test('allow-listed targets → 201', async () => {
      const res = await t.req('POST', '/AlertEscalation/GLOBAL.OnCall', { body: webhook('http://127.0.0.1:9/x') });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.Recipients[1].Address, 'http://127.0.0.1:9/x');
      const put = await t.req('PUT', '/AlertEscalation/GLOBAL.OnCall', { body: webhook('http://10.20.30.40/hook') });
      assert.equal(put.status, 200, put.body);
    });

    test('targets outside the allow-list are still refused', async () => {
      const res = await t.req('POST', '/AlertEscalation/GLOBAL.Other', { body: webhook('http://169.254.169.254/') });
      assert.equal(res.status, 400, res.body);
      assert.match(res.json.message, /link-local/);
    });
  });
}
