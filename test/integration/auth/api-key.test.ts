import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { interfacePaths } from '../../../src/config/config.ts';
import { Authenticator } from '../../../src/services/auth.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { ADMIN_KEY, type Response, startTestServer, type TestServer } from '../../helpers/server.ts';

/** docs/architecture.md §9–§10: how the JSON interface treats API keys. */

const UNAUTHENTICATED = '{"code":"401","message":"Authentication required"}';
const READ = '/Queue/GLOBAL.Default';
const START = Date.UTC(2026, 2, 2, 8, 0, 0);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** Past the Authenticator's key cache, so a change made in the database is seen. */
const PAST_CACHE = Authenticator.CACHE_MS + 1;

function assertUnauthenticated(res: Response, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.status} ${res.body}`);
  assert.equal(res.body, UNAUTHENTICATED, what);
  const challenge = res.headers['www-authenticate'];
  assert.ok(typeof challenge === 'string' && challenge.length > 0, `${what}: WWW-Authenticate header`);
}

function assertReads(res: Response, what: string): void {
  assert.equal(res.status, 200, `${what}: ${res.status} ${res.body}`);
  assert.equal(res.json.businessKey, 'Queue:GLOBAL.Default', what);
}

for (const backend of backends()) {
  describe(backend.name, () => {
    describe('API keys', () => {
      const clock = new FakeClock(START);
      let t: TestServer;
      let users = 0;

      /** A fresh Viewer with one key. */
      async function newKey(options: { lifetimeMs?: number } = {}): Promise<{ user: string; key: string; id: string }> {
        users += 1;
        const user = `keyuser${users}`;
        await t.server.accounts.addUser(user, { roles: ['Viewer'] });
        const { key, record } = await t.server.accounts.createApiKey(user, options);
        return { user, key, id: record.id };
      }

      before(async () => {
        t = await startTestServer(backend, {}, { clock });
      });
      after(async () => {
        await t?.close();
      });

      test('a valid key in X-API-Key is accepted whatever the case of the header name', async () => {
        const { key } = await newKey();
        for (const name of ['X-API-Key', 'x-api-key', 'X-API-KEY', 'x-Api-kEY'])
          assertReads(await t.req('GET', READ, { key: null, headers: { [name]: key } }), name);
      });

      test('a request without a key gets 401 with WWW-Authenticate', async () => {
        for (const method of ['GET', 'PUT', 'DELETE'])
          assertUnauthenticated(await t.req(method, READ, { key: null }), `${method} without a key`);
        assertUnauthenticated(
          await t.req('POST', '/Queue/GLOBAL.NoKey', { key: null, body: {} }),
          'POST without a key',
        );
        assertUnauthenticated(await t.req('GET', READ, { key: '' }), 'empty X-API-Key');
        assert.equal((await t.req('GET', '/Queue/GLOBAL.NoKey')).status, 404, 'nothing was created');
      });

      test('an unknown or malformed key gets the same 401', async () => {
        const { key } = await newKey();
        const oneOff = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
        const cases: Record<string, string> = {
          'unknown key': `mr_${'x'.repeat(43)}`,
          'valid key with one character changed': oneOff,
          'valid key with a character more': `${key}A`,
          'valid key cut short': key.slice(0, 20),
          'a very long key': 'k'.repeat(4000),
          'a key with spaces': 'not a key at all',
        };
        for (const [what, presented] of Object.entries(cases))
          assertUnauthenticated(await t.req('GET', READ, { key: presented }), what);
        assertReads(await t.req('GET', READ, { key }), 'the valid key still works');
      });

      test('a key in the query string is ignored', async () => {
        for (const param of ['api_key', 'apiKey', 'X-API-Key'])
          assertUnauthenticated(
            await t.req('GET', `${READ}?${param}=${encodeURIComponent(ADMIN_KEY)}`, { key: null }),
            `?${param}=`,
          );
      });

      test('a revoked key gets 401 once the key cache has lapsed', async () => {
        const { key, id, user } = await newKey();
        assertReads(await t.req('GET', READ, { key }), 'before revocation');
        await t.server.accounts.revokeApiKey(id);
        clock.advance(PAST_CACHE);
        assertUnauthenticated(await t.req('GET', READ, { key }), 'revoked key');
        const [record] = await t.server.accounts.listApiKeys(user);
        assert.equal(record?.revokedTime, clock.now() - PAST_CACHE);
      });

      test('requests presenting one key while its cache entry is missing or stale read it from the database once', async () => {
        const { key, user } = await newKey();
        const store = t.server.store;
        let reads = 0;
        // The server's own store, its key look-up counted.
        const counted = Object.create(store, {
          getApiKeyByHash: {
            value: (hash: string) => {
              reads += 1;
              return store.getApiKeyByHash(hash);
            },
          },
        });
        const auth = new Authenticator(counted, clock, { idleLapseMs: 30 * DAY, failuresPerMinute: 1000 });
        const many = () => Promise.all(Array.from({ length: 20 }, () => auth.authenticateApiKey(key, '127.0.0.9')));
        for (const p of await many()) assert.equal(p.user, user);
        assert.equal(reads, 1, 'twenty requests at a cold cache');
        await many();
        assert.equal(reads, 1, 'twenty more within the cache time');
        clock.advance(PAST_CACHE);
        for (const p of await many()) assert.equal(p.user, user);
        assert.equal(reads, 2, "twenty requests at the entry's expiry");
        await assert.rejects(auth.authenticateApiKey(`${key}x`, '127.0.0.9'), /Authentication required/);
        assert.equal(reads, 3, 'an unknown key is read, and refused');
      });

      test('an expired key gets 401', async () => {
        const lifetimeMs = 10 * MINUTE;
        const { key } = await newKey({ lifetimeMs });
        assertReads(await t.req('GET', READ, { key }), 'fresh key');
        clock.advance(lifetimeMs - 1000);
        assertReads(await t.req('GET', READ, { key }), 'a second before expiry');
        clock.advance(2000);
        assertUnauthenticated(await t.req('GET', READ, { key }), 'expired key');
      });

      test('the key of a disabled user gets 401, and works again once the user is enabled', async () => {
        const { key, user } = await newKey();
        assertReads(await t.req('GET', READ, { key }), 'enabled user');
        await t.server.accounts.setDisabled(user, true);
        clock.advance(PAST_CACHE);
        assertUnauthenticated(await t.req('GET', READ, { key }), 'disabled user');
        await t.server.accounts.setDisabled(user, false);
        clock.advance(PAST_CACHE);
        assertReads(await t.req('GET', READ, { key }), 'enabled again');
      });

      test('every refusal looks the same: body and WWW-Authenticate', async () => {
        const revoked = await newKey();
        await t.server.accounts.revokeApiKey(revoked.id);
        const expired = await newKey({ lifetimeMs: MINUTE });
        const disabled = await newKey();
        await t.server.accounts.setDisabled(disabled.user, true);
        clock.advance(MINUTE + PAST_CACHE);
        const responses = [
          await t.req('GET', READ, { key: null }),
          await t.req('GET', READ, { key: `mr_${'y'.repeat(43)}` }),
          await t.req('GET', READ, { key: revoked.key }),
          await t.req('GET', READ, { key: expired.key }),
          await t.req('GET', READ, { key: disabled.key }),
          await t.req('GET', `${READ}?api_key=${encodeURIComponent(ADMIN_KEY)}`, { key: null }),
        ];
        for (const [i, res] of responses.entries()) assertUnauthenticated(res, `case ${i}`);
        assert.equal(new Set(responses.map((r) => r.headers['www-authenticate'])).size, 1, 'one challenge');
        assert.equal(new Set(responses.map((r) => r.headers['content-type'])).size, 1, 'one content type');
      });

      test('the last-used time of a key is recorded', async () => {
        const { key, user } = await newKey();
        const lastUsed = async () => (await t.server.accounts.listApiKeys(user))[0]?.lastUsedTime;
        await t.server.auth.flushUses();
        assert.equal(await lastUsed(), null, 'a new key was never used');

        clock.advance(5000);
        const firstUse = clock.now();
        assertReads(await t.req('GET', READ, { key }), 'first use');
        await t.server.auth.flushUses();
        assert.equal(await lastUsed(), firstUse, 'first use recorded');

        clock.advance(10 * MINUTE);
        const laterUse = clock.now();
        assertReads(await t.req('GET', READ, { key }), 'later use');
        await t.server.auth.flushUses();
        assert.equal(await lastUsed(), laterUse, 'later use recorded');
      });

      test('the description document needs no key', async () => {
        const res = await t.req('GET', `/${interfacePaths(t.config).swagger}`, { key: null });
        assert.equal(res.status, 200, res.body.slice(0, 200));
        assert.match(String(res.headers['content-type']), /yaml/);
        assert.match(res.body, /^openapi: /m);
        assert.match(res.body, /X-API-Key/);
      });
    });

    describe('API key idle lapse', () => {
      const clock = new FakeClock(START);
      let t: TestServer;
      before(async () => {
        // A week instead of three months, so the key does not reach its expiry while the test waits twice.
        t = await startTestServer(backend, { apiKeyIdleLapseMs: 7 * DAY }, { clock });
      });
      after(async () => {
        await t?.close();
      });

      test('a key unused for longer than apiKeyIdleLapseMs gets 401; using it keeps it alive', async () => {
        const lapse = t.config.apiKeyIdleLapseMs;
        await t.server.accounts.addUser('idle', { roles: ['Viewer'] });
        const used = (await t.server.accounts.createApiKey('idle', {})).key;
        const unused = (await t.server.accounts.createApiKey('idle', {})).key;

        clock.advance(lapse - MINUTE);
        assertReads(await t.req('GET', READ, { key: used }), 'unused for just under the lapse');

        clock.advance(2 * MINUTE);
        assertUnauthenticated(await t.req('GET', READ, { key: unused }), 'never used for longer than the lapse');
        assertReads(await t.req('GET', READ, { key: used }), 'used two minutes ago');

        await t.server.auth.flushUses();
        clock.advance(lapse + 1000);
        assertUnauthenticated(await t.req('GET', READ, { key: used }), 'unused for longer than the lapse');
      });
    });

    describe('failed-authentication rate limit', () => {
      const clock = new FakeClock(START);
      let t: TestServer;
      before(async () => {
        t = await startTestServer(backend, { authFailuresPerMinute: 3 }, { clock });
      });
      after(async () => {
        await t?.close();
      });

      const fromAddress = async (remoteAddress: string, key: string) => {
        const res = await t.server.app.inject({
          method: 'GET',
          url: `${t.base}${READ}`,
          headers: { 'X-API-Key': key },
          remoteAddress,
        });
        return res.statusCode;
      };

      test('too many wrong keys from one address get 429 with Retry-After; other addresses are unaffected', async () => {
        for (let i = 1; i <= 3; i += 1)
          assertUnauthenticated(await t.req('GET', READ, { key: `mr_wrong_key_number_${i}` }), `wrong key ${i}`);

        const limited = await t.req('GET', READ, { key: 'mr_wrong_key_number_4' });
        assert.equal(limited.status, 429, limited.body);
        assert.equal(limited.json?.code, '429');
        assert.equal(typeof limited.json?.message, 'string');
        const retryAfter = Number(limited.headers['retry-after']);
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);

        assert.equal((await t.req('GET', READ)).status, 429, 'a good key from the limited address waits too');
        assert.equal(await fromAddress('10.1.2.3', ADMIN_KEY), 200, 'another address is not limited');
        assert.equal(await fromAddress('10.1.2.3', 'mr_wrong_key_elsewhere'), 401, 'and gets its own 401');

        clock.advance(retryAfter * 1000);
        assertReads(await t.req('GET', READ), 'after Retry-After the address may try again');
      });
    });
  });
}
