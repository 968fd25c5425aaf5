import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { Authenticator } from '../../../src/services/auth.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { RESOURCE, startIdentityProvider, type TestIdentityProvider } from '../../helpers/oidc-provider.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, type Response, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * docs/architecture.md §10, single sign-on on the JSON interface: an access token of the configured OpenID provider
 * (a real oidc-provider on loopback) in `Authorization: Bearer` stands in for an API key, with the roles its groups
 * claim maps to; an expired token, one of another issuer, one signed with another key or for another audience gets
 * the interface's 401 record. With `--oidc-only`, passwords are refused and API keys keep working.
 */

const UNAUTHENTICATED = '{"code":"401","message":"Authentication required"}';
const READ = '/Queue/GLOBAL.Default';
/** Past the bearer tokens' cache, so a change in the database is seen. */
const PAST_CACHE = Authenticator.CACHE_MS + 1;

function assertRefused(res: Response, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.status} ${res.body}`);
  assert.equal(res.body, UNAUTHENTICATED, what);
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="Millrace"', what);
}

const bearer = (token: string) => ({ key: null, headers: { authorization: `Bearer ${token}` } });

describe('single sign-on: bearer tokens', () => {
  let idp: TestIdentityProvider;
  let foreign: TestIdentityProvider;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-oidc-'));
    idp = await startIdentityProvider({
      users: {},
      clients: { reporter: ['millrace-viewers'], robot: ['millrace-admins'], stranger: ['other-group'] },
      accessTokenSeconds: 300,
    });
    foreign = await startIdentityProvider({ users: {}, clients: { robot: ['millrace-admins'] } });
  });
  after(async () => {
    await idp?.close();
    await foreign?.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const backend of backends()) {
    describe(backend.name, () => {
      const clock = new FakeClock(Date.now());
      let t: TestServer;

      before(async () => {
        clock.set(Date.now());
        t = await startTestServer(backend, { oidc: await idp.settings(dir) }, { clock });
      });
      after(() => t?.close());

      test("a token's groups claim gives its roles: a viewer reads and may not change, an administrator may", async () => {
        const viewer = (await idp.clientToken('reporter')).token;
        const read = await t.req('GET', READ, bearer(viewer));
        assert.equal(read.status, 200, read.body);
        assert.equal(read.json.businessKey, 'Queue:GLOBAL.Default');
        const change = await t.req('PUT', READ, { ...bearer(viewer), body: { Description: 'by a viewer' } });
        assert.equal(change.status, 403, change.body);
        assert.equal(change.json.code, '403');

        const admin = (await idp.clientToken('robot')).token;
        const changed = await t.req('PUT', READ, { ...bearer(admin), body: { Description: 'by the robot' } });
        assert.equal(changed.status, 200, changed.body);
        assert.equal((await t.req('GET', READ)).json.Description, 'by the robot');
      });

      test('a token whose groups map to no role reads nothing', async () => {
        const token = (await idp.clientToken('stranger')).token;
        const res = await t.req('GET', READ, bearer(token));
        assert.equal(res.status, 404, res.body);
      });

      test("a token past its expiry on the server's clock is refused", async () => {
        const { token } = await idp.clientToken('reporter');
        const expiry = Number(decodeJwt(token).exp) * 1000;
        try {
          clock.set(expiry - 1000);
          assert.equal((await t.req('GET', READ, bearer(token))).status, 200);
          clock.set(expiry);
          assertRefused(await t.req('GET', READ, bearer(token)), 'expired');
        } finally {
          clock.set(Date.now());
        }
        assert.equal((await t.req('GET', READ, bearer(token))).status, 200);
      });

      test('a token of another issuer, for another audience, or signed with another key is refused', async () => {
        const other = (await foreign.clientToken('robot')).token;
        assertRefused(await t.req('GET', READ, bearer(other)), 'foreign issuer');

        const { privateKey } = await generateKeyPair('RS256', { extractable: true });
        const kid = 'test-key'; // the issuer's key id, with another key behind it
        const now = Math.floor(clock.now() / 1000);
        const forged = await new SignJWT({ groups: ['millrace-admins'] })
          .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
          .setIssuer(idp.issuer)
          .setAudience(RESOURCE)
          .setSubject('robot')
          .setIssuedAt(now)
          .setExpirationTime(now + 300)
          .sign(privateKey);
        assertRefused(await t.req('GET', READ, bearer(forged)), 'forged signature');
        assertRefused(await t.req('GET', READ, bearer('not-a-jwt')), 'not a JWT');
        const elsewhere = (await idp.clientToken('robot', 'urn:another-api')).token;
        assertRefused(await t.req('GET', READ, bearer(elsewhere)), 'another audience');
        assertRefused(await t.req('GET', READ, bearer(`${forged.slice(0, -4)}AAAA`)), 'tampered');
      });

      test('a disabled user of the token’s name is refused; an API key sent beside a token decides', async () => {
        const token = (await idp.clientToken('reporter')).token;
        await t.server.accounts.addUser('reporter', { roles: ['Viewer'] });
        await t.server.accounts.setDisabled('reporter', true);
        clock.advance(PAST_CACHE);
        assertRefused(await t.req('GET', READ, bearer(token)), 'disabled');
        const both = await t.req('GET', READ, { key: ADMIN_KEY, headers: { authorization: `Bearer ${token}` } });
        assert.equal(both.status, 200, both.body);
        await t.server.accounts.setDisabled('reporter', false);
        clock.advance(PAST_CACHE);
        assert.equal((await t.req('GET', READ, bearer(token))).status, 200);
      });

      test("the dashboard's sign-in begins with PKCE, state and nonce kept in an encrypted Lax cookie", async () => {
        const res = await t.server.app.inject({
          method: 'GET',
          url: '/millrace/ui/oidc/login',
          headers: { host: '127.0.0.1:7070' },
        });
        assert.equal(res.statusCode, 302, res.body);
        const to = new URL(String(res.headers.location));
        assert.equal(to.origin, idp.issuer);
        assert.equal(to.searchParams.get('redirect_uri'), 'http://127.0.0.1:7070/millrace/ui/oidc/callback');
        assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
        assert.match(to.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
        assert.ok(to.searchParams.get('state') && to.searchParams.get('nonce'));
        const cookie = String(res.headers['set-cookie']);
        assert.match(cookie, /^millrace_oidc=[^;]+; Path=\/millrace\/ui\/oidc\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
        // The verifier is not readable in the cookie: five parts of a JWE, none holding the state in clear.
        const value = cookie.slice('millrace_oidc='.length, cookie.indexOf(';'));
        assert.equal(value.split('.').length, 5);
        assert.ok(!Buffer.from(value.replaceAll('.', ''), 'base64url').includes(to.searchParams.get('state') ?? '-'));
      });

      test('a callback without its sign-in, or with a cookie not sealed by this server, is refused', async () => {
        for (const cookie of [undefined, 'millrace_oidc=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAAA.BBBB.CCCC']) {
          const res = await t.server.app.inject({
            method: 'GET',
            url: '/millrace/ui/oidc/callback?code=abc&state=xyz',
            headers: cookie ? { cookie } : {},
          });
          assert.equal(res.statusCode, 302, res.body);
          assert.equal(res.headers.location, '/millrace/ui/?sso=failed');
          assert.doesNotMatch(String(res.headers['set-cookie']), /millrace_session=[^;]/);
        }
      });

      test('the XML interface does not take bearer tokens', async () => {
        const token = (await idp.clientToken('robot')).token;
        const res = await t.xml('GET', '/queues', { auth: null, headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.status, 401, res.body);
        assert.match(res.body, /<error>\s*<code>401<\/code>/);
      });
    });

    describe(`${backend.name}, --oidc-only without creating users`, () => {
      const clock = new FakeClock(Date.now());
      let t: TestServer;

      before(async () => {
        clock.set(Date.now());
        t = await startTestServer(
          backend,
          { oidc: await idp.settings(dir, { only: true, createUsers: false }) },
          { clock },
        );
      });
      after(() => t?.close());

      test("passwords are refused on the XML interface and the dashboard's form; API keys keep working", async () => {
        const xml = await t.xml('GET', '/queues', { auth: ['admin', ADMIN_PASSWORD] });
        assert.equal(xml.status, 401, xml.body);
        const form = await t.server.app.inject({
          method: 'POST',
          url: '/millrace/ui/api/session',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }),
        });
        assert.equal(form.statusCode, 401, form.body);
        assert.equal(form.body, UNAUTHENTICATED);
        const options = await t.server.app.inject({ method: 'GET', url: '/millrace/ui/api/signin-options' });
        assert.deepEqual(options.json(), {
          passwords: false,
          sso: { label: new URL(idp.issuer).host, url: '/millrace/ui/oidc/login' },
        });
        assert.equal((await t.req('GET', READ)).status, 200);
      });

      test('a token of a user Millrace does not know is refused until the user is created', async () => {
        const token = (await idp.clientToken('robot')).token;
        assertRefused(await t.req('GET', READ, bearer(token)), 'unknown user');
        await t.server.accounts.addUser('robot', { roles: [] });
        clock.advance(PAST_CACHE);
        const res = await t.req('GET', READ, bearer(token));
        assert.equal(res.status, 200, res.body);
      });
    });
  }
});
