import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Authenticator } from '../../../src/services/auth.ts';
import { Sessions } from '../../../src/services/sessions.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../../helpers/server.ts';

/** The dashboard's sign-in, session cookie, CSRF defence and static files, as a browser meets them. */

const START = Date.UTC(2026, 10, 23, 8, 0, 0);
const UI = '/millrace/ui';

interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
}

for (const backend of backends()) {
  describe(backend.name, () => {
    const clock = new FakeClock(START);
    let t: TestServer;

    before(async () => {
      t = await startTestServer(backend, { authFailuresPerMinute: 5 }, { clock });
    });
    after(() => t?.close());

    const inject = (
      method: string,
      url: string,
      o: { cookie?: string; csrf?: string; body?: unknown; ip?: string; headers?: Record<string, string> } = {},
    ) =>
      t.server.app.inject({
        method: method as 'GET',
        url,
        remoteAddress: o.ip ?? '127.0.0.1',
        headers: {
          ...(o.cookie ? { cookie: o.cookie } : {}),
          ...(o.csrf ? { 'x-millrace-csrf': o.csrf } : {}),
          ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(o.headers ?? {}),
        },
        ...(o.body !== undefined ? { payload: JSON.stringify(o.body) } : {}),
      });

    async function signIn(user = 'admin', password = ADMIN_PASSWORD, ip = '10.0.0.1'): Promise<Signed> {
      const res = await inject('POST', `${UI}/api/session`, { body: { user, password }, ip });
      assert.equal(res.statusCode, 200, res.body);
      const setCookie = String(res.headers['set-cookie']);
      const cookie = setCookie.split(';')[0] as string;
      return { cookie, csrf: res.json().csrf, setCookie };
    }

    test('sign-in sets an HttpOnly, SameSite=Strict, expiring cookie scoped to the context', async () => {
      const { setCookie } = await signIn();
      assert.match(setCookie, /^millrace_session=[A-Za-z0-9_-]{43}; /);
      assert.match(setCookie, /; Path=\/millrace\/(;|$)/);
      assert.match(setCookie, /; HttpOnly(;|$)/);
      assert.match(setCookie, /; SameSite=Strict(;|$)/);
      assert.match(setCookie, new RegExp(`; Max-Age=${Sessions.LIFETIME_MS / 1000}(;|$)`));
    });

    test('the cookie stands in for an API key; state changes need the CSRF token', async () => {
      const s = await signIn();
      const me = await inject('GET', `${UI}/api/session`, { cookie: s.cookie });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().user, 'admin');
      assert.equal(
        me.json().serverTime,
        clock.now(),
        "the server's clock (virtual here), which the forecast plans from",
      );
      assert.ok(me.json().actions.kill.includes('Running'));
      assert.ok(!me.json().actions.kill.includes('Queued'));

      const read = await inject('GET', `${t.base}/Queue/GLOBAL.Default`, { cookie: s.cookie });
      assert.equal(read.statusCode, 200, read.body);

      const noToken = await inject('PUT', `${t.base}/Queue/GLOBAL.Default`, { cookie: s.cookie, body: { Held: true } });
      assert.equal(noToken.statusCode, 403, noToken.body);
      assert.match(noToken.json().message, /X-Millrace-CSRF/);
      const wrongToken = await inject('PUT', `${t.base}/Queue/GLOBAL.Default`, {
        cookie: s.cookie,
        csrf: `${s.csrf.slice(0, -1)}x`,
        body: { Held: true },
      });
      assert.equal(wrongToken.statusCode, 403);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Default')).json.Held, false, 'nothing changed');

      const ok = await inject('PUT', `${t.base}/Queue/GLOBAL.Default`, {
        cookie: s.cookie,
        csrf: s.csrf,
        body: { Held: true },
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Default')).json.Held, true);
      await t.req('PUT', '/Queue/GLOBAL.Default', { body: { Held: false } });
    });

    test('the session has the user’s privileges, no more', async () => {
      await t.loginWithGrants('vera', 'vera-password-123', ['*:*:View']);
      const s = await signIn('vera', 'vera-password-123');
      const res = await inject('PUT', `${t.base}/Queue/GLOBAL.Default`, {
        cookie: s.cookie,
        csrf: s.csrf,
        body: { Held: true },
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(
        (await inject('GET', `${UI}/api/session`, { cookie: s.cookie })).json().grants[0].privileges[0],
        'View',
      );
    });

    test('sign-out ends the session on the server', async () => {
      const s = await signIn();
      const noToken = await inject('DELETE', `${UI}/api/session`, { cookie: s.cookie });
      assert.equal(noToken.statusCode, 403);
      const out = await inject('DELETE', `${UI}/api/session`, { cookie: s.cookie, csrf: s.csrf });
      assert.equal(out.statusCode, 204);
      assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
      assert.equal((await inject('GET', `${UI}/api/session`, { cookie: s.cookie })).statusCode, 401);
      assert.equal((await inject('GET', `${t.base}/Queue/GLOBAL.Default`, { cookie: s.cookie })).statusCode, 401);
    });

    test('a session lapses after the idle timeout and after its lifetime', async () => {
      const idle = await signIn();
      clock.advance(Sessions.IDLE_MS - 1000);
      assert.equal((await inject('GET', `${UI}/api/session`, { cookie: idle.cookie })).statusCode, 200);
      clock.advance(Sessions.IDLE_MS + 1);
      assert.equal((await inject('GET', `${UI}/api/session`, { cookie: idle.cookie })).statusCode, 401);

      const busy = await signIn();
      for (let used = 0; used < Sessions.LIFETIME_MS; used += Sessions.IDLE_MS / 2) {
        assert.equal((await inject('GET', `${UI}/api/session`, { cookie: busy.cookie })).statusCode, 200);
        clock.advance(Sessions.IDLE_MS / 2);
      }
      assert.equal((await inject('GET', `${UI}/api/session`, { cookie: busy.cookie })).statusCode, 401);
    });

    test('a disabled user or a new password ends the session', async () => {
      await t.loginWithGrants('dora', 'dora-password-123', ['*:*:View']);
      const s = await signIn('dora', 'dora-password-123');
      await t.server.accounts.setPassword('dora', 'another-password-456');
      clock.advance(Authenticator.CACHE_MS + 1);
      assert.equal((await inject('GET', `${UI}/api/session`, { cookie: s.cookie })).statusCode, 401);
    });

    test('the database keeps only the SHA-256 of the cookie value, so a restart signs nobody out', async () => {
      const s = await signIn();
      const value = s.cookie.slice('millrace_session='.length);
      const digest = createHash('sha256').update(value).digest('base64');
      const stored = await t.server.store.sessions.get(digest);
      assert.equal(stored?.user, 'admin');
      assert.equal(await t.server.store.sessions.get(value), undefined, 'not under the value itself');
      await t.restart();
      const me = await inject('GET', `${UI}/api/session`, { cookie: s.cookie });
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(me.json().csrf, s.csrf, 'the same CSRF token after the restart');
      const write = await inject('PUT', `${t.base}/Queue/GLOBAL.Default`, {
        cookie: s.cookie,
        csrf: s.csrf,
        body: { Held: false },
      });
      assert.equal(write.statusCode, 200, write.body);
    });

    test('the last use is written at most once a minute', async () => {
      const s = await signIn();
      const digest = createHash('sha256').update(s.cookie.slice('millrace_session='.length)).digest('base64');
      const began = (await t.server.store.sessions.get(digest))?.lastSeenAt;
      assert.equal(began, clock.now());
      for (let i = 0; i < 5; i++) {
        clock.advance(10_000);
        assert.equal((await inject('GET', `${UI}/api/session`, { cookie: s.cookie })).statusCode, 200);
      }
      assert.equal((await t.server.store.sessions.get(digest))?.lastSeenAt, began, 'not written within the minute');
      clock.advance(Sessions.TOUCH_MS);
      assert.equal((await inject('GET', `${UI}/api/session`, { cookie: s.cookie })).statusCode, 200);
      assert.equal((await t.server.store.sessions.get(digest))?.lastSeenAt, clock.now(), 'written once it passed');
    });

    test('disabling a user through the JSON interface ends its sessions at once', async () => {
      await t.loginWithGrants('ella', 'ella-password-123', ['*:*:View']);
      const first = await signIn('ella', 'ella-password-123');
      const second = await signIn('ella', 'ella-password-123', '10.0.0.7');
      const disabled = await t.req('PUT', '/User/ella', { body: { Disabled: true } });
      assert.equal(disabled.status, 200, disabled.body);
      for (const s of [first, second]) {
        assert.equal((await inject('GET', `${UI}/api/session`, { cookie: s.cookie })).statusCode, 401);
        assert.equal((await inject('GET', `${t.base}/Queue/GLOBAL.Default`, { cookie: s.cookie })).statusCode, 401);
      }
      const whileDisabled = await inject('POST', `${UI}/api/session`, {
        body: { user: 'ella', password: 'ella-password-123' },
        ip: '10.0.0.8',
      });
      assert.equal(whileDisabled.statusCode, 401, 'a disabled user cannot sign in');
      await t.req('PUT', '/User/ella', { body: { Disabled: false } });
      assert.equal(
        (await inject('GET', `${UI}/api/session`, { cookie: first.cookie })).statusCode,
        401,
        'enabling the user again does not bring an ended session back',
      );
      const again = await inject('POST', `${UI}/api/session`, {
        body: { user: 'ella', password: 'ella-password-123' },
        ip: '10.0.0.9',
      });
      assert.equal(again.statusCode, 200, 'enabled again, ella signs in anew');
    });

    test('wrong passwords get one answer and are rate-limited like basic auth', async () => {
      const ip = '10.9.9.9';
      for (let i = 0; i < 5; i += 1) {
        const res = await inject('POST', `${UI}/api/session`, { body: { user: 'admin', password: 'wrong' }, ip });
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json(), { code: '401', message: 'Authentication required' });
        assert.ok(!/basic/i.test(String(res.headers['www-authenticate'])), 'no browser password dialog');
        assert.equal(res.headers['set-cookie'], undefined);
      }
      const limited = await inject('POST', `${UI}/api/session`, {
        body: { user: 'admin', password: ADMIN_PASSWORD },
        ip,
      });
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      const bad = await inject('POST', `${UI}/api/session`, { body: { user: 1 }, ip: '10.0.0.2' });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().code, '400');
    });

    test('pages are served with their types, caching and a strict Content-Security-Policy', async () => {
      const redirect = await inject('GET', UI);
      assert.equal(redirect.statusCode, 301);
      assert.equal(redirect.headers.location, `${UI}/`);
      const index = await inject('GET', `${UI}/`);
      assert.equal(index.statusCode, 200);
      assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
      const csp = String(index.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.ok(!csp.includes('unsafe-inline') && !csp.includes('unsafe-eval'), csp);
      assert.equal(index.headers['x-content-type-options'], 'nosniff');
      assert.ok(!/<script>|\son\w+=|style=/i.test(index.body), 'no inline script, handler or style');

      const js = await inject('GET', `${UI}/app/main.js`);
      assert.equal(js.statusCode, 200);
      assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(js.headers['cache-control'], 'no-cache');
      const etag = String(js.headers.etag);
      const again = await inject('GET', `${UI}/app/main.js`, { headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304);
      assert.equal((await inject('GET', `${UI}/style.css`)).headers['content-type'], 'text/css; charset=utf-8');

      for (const path of [
        '/../../package.json',
        '/app/../../../package.json',
        '/nope.js',
        '/%2e%2e/%2e%2e/package.json',
      ]) {
        const res = await inject('GET', `${UI}${path}`);
        assert.equal(res.statusCode, 404, path);
        assert.equal(res.json().code, '404');
      }
    });
  });
}

describe('dashboard under another context', () => {
  let t: TestServer;
  before(async () => {
    const [first] = backends();
    assert.ok(first);
    t = await startTestServer(first, { context: 'acme/prod', vendor: 'Acme' });
  });
  after(() => t?.close());

  test('lives at <context>/ui/ with the cookie scoped to the context and the JSON base of the vendor', async () => {
    const redirect = await t.server.app.inject({ method: 'GET', url: '/acme/prod/ui' });
    assert.equal(redirect.statusCode, 301);
    assert.equal(redirect.headers.location, '/acme/prod/ui/');
    assert.equal((await t.server.app.inject({ method: 'GET', url: '/millrace/ui/' })).statusCode, 404);
    const signIn = await t.server.app.inject({
      method: 'POST',
      url: '/acme/prod/ui/api/session',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }),
    });
    assert.equal(signIn.statusCode, 200, signIn.body);
    assert.match(String(signIn.headers['set-cookie']), /; Path=\/acme\/prod\/;/);
    assert.equal(signIn.json().jsonBase, '/acme/prod/api-extension/External/Acme/Acme_RestService/rest/v1');
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
    const read = await t.server.app.inject({
      method: 'GET',
      url: `${t.base}/Queue/GLOBAL.Default`,
      headers: { cookie },
    });
    assert.equal(read.statusCode, 200, read.body);
  });
});
