import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Authenticator } from '../../../src/services/auth.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { formatInstant } from '../../../src/time/date-format.ts';
import { backends } from '../../helpers/backends.ts';
import { type Response, startTestServer, type TestServer } from '../../helpers/server.ts';

/** docs/architecture.md §10: users, roles and API keys over the JSON interface, for administrators only. */

const START = Date.UTC(2026, 10, 26, 9, 0, 0);
const DAY = 86_400_000;
const READ = '/Queue/GLOBAL.Default';
const UNAUTHENTICATED = '{"code":"401","message":"Authentication required"}';

function assertError(res: Response, status: number, what: string, message?: RegExp): void {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.body}`);
  assert.deepEqual(Object.keys(res.json ?? {}), ['code', 'message'], `${what}: the error record`);
  assert.equal(res.json.code, String(status), what);
  if (message) assert.match(res.json.message, message, what);
}

for (const backend of backends()) {
  describe(backend.name, () => {
    const clock = new FakeClock(START);
    let t: TestServer;
    let viewerKey: string;
    let operatorKey: string;

    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      viewerKey = await t.keyWithRoles('watcher', ['Viewer']);
      operatorKey = await t.keyWithRoles('runner', ['Operator']);
    });
    after(() => t?.close());

    test('only administrators reach users, roles and keys: 403 otherwise, whatever the body', async () => {
      const routes: Array<[string, string]> = [
        ['GET', '/User'],
        ['GET', '/Role'],
        ['GET', '/User/watcher'],
        ['POST', '/User/newcomer'],
        ['PUT', '/User/watcher'],
        ['DELETE', '/User/watcher'],
        ['GET', '/User/watcher/apikeys'],
        ['POST', '/User/watcher/apikeys'],
        ['DELETE', '/User/watcher/apikeys/some-id'],
      ];
      for (const key of [viewerKey, operatorKey])
        for (const [method, path] of routes) {
          const body = method === 'POST' || method === 'PUT' ? { Roles: ['Administrator'] } : undefined;
          assertError(await t.req(method, path, { key, ...(body ? { body } : {}) }), 403, `${method} ${path}`);
          const garbage = await t.req(method, path, {
            key,
            payload: '{not json',
            headers: { 'content-type': 'application/json' },
          });
          if (method !== 'GET') assertError(garbage, 403, `${method} ${path} with a malformed body`);
        }
      assert.equal((await t.req('GET', '/User/newcomer')).status, 404, 'nothing was created');
      assert.deepEqual((await t.req('GET', '/User/watcher')).json.Roles, ['Viewer'], 'nothing was changed');
      assert.equal((await t.req('GET', '/User', { key: null })).body, UNAUTHENTICATED, 'no credentials: the usual 401');
    });

    test('a user round trip: create, read, list, change, delete; the password is never returned', async () => {
      const created = await t.req('POST', '/User/alice', {
        body: { Roles: ['Operator'], Password: 'alice-password-1' },
      });
      assert.equal(created.status, 201, created.body);
      assert.deepEqual(created.json, {
        Name: 'alice',
        Roles: ['Operator'],
        Disabled: false,
        PasswordSet: true,
        CreationTime: '2026/11/26 09:00:00,000 UTC',
      });
      assert.ok(!created.body.includes('alice-password-1') && !/scrypt|\$/.test(created.body), created.body);
      assert.deepEqual((await t.req('GET', '/User/alice')).json, created.json);
      assert.equal(
        (await t.xml('GET', `/object/Queue/GLOBAL.Default`, { auth: ['alice', 'alice-password-1'] })).status,
        200,
        'the password signs in',
      );

      const list = await t.req('GET', '/User');
      assert.equal(list.status, 200, list.body);
      assert.deepEqual(Object.keys(list.json), ['items', 'next']);
      assert.deepEqual(
        list.json.items.map((u: { Name: string }) => u.Name),
        ['admin', 'alice', 'runner', 'watcher'],
      );
      const first = await t.req('GET', '/User?Limit=2&fields=Name');
      assert.deepEqual(first.json.items, [{ Name: 'admin' }, { Name: 'alice' }]);
      const second = await t.req('GET', `/User?Limit=2&fields=Name&After=${first.json.next}`);
      assert.deepEqual(second.json, { items: [{ Name: 'runner' }, { Name: 'watcher' }], next: null });
      assertError(await t.req('GET', '/User?Colour=red'), 400, 'unknown parameter', /Colour/);

      const changed = await t.req('PUT', '/User/alice', { body: { Roles: ['Viewer', 'Operator'] } });
      assert.equal(changed.status, 200, changed.body);
      assert.deepEqual(changed.json.Roles, ['Viewer', 'Operator']);
      assert.equal(changed.json.PasswordSet, true, 'a field not given is kept');
      await t.req('PUT', '/User/alice', { body: { Password: 'alice-password-2' } });
      clock.advance(Authenticator.CACHE_MS + 1);
      assert.equal(
        (await t.xml('GET', `/object/Queue/GLOBAL.Default`, { auth: ['alice', 'alice-password-1'] })).status,
        401,
        'the old password no longer signs in',
      );
      assert.equal(
        (await t.xml('GET', `/object/Queue/GLOBAL.Default`, { auth: ['alice', 'alice-password-2'] })).status,
        200,
      );

      assertError(await t.req('POST', '/User/alice', { body: {} }), 409, 'created twice', /alice/);
      assert.equal((await t.req('DELETE', '/User/alice')).status, 204);
      assertError(await t.req('GET', '/User/alice'), 404, 'deleted');
      assertError(await t.req('DELETE', '/User/alice'), 404, 'deleted twice');
      assertError(await t.req('PUT', '/User/nobody', { body: { Disabled: true } }), 404, 'change of a missing user');
    });

    test('the roles list: the built-in roles with their grants', async () => {
      const res = await t.req('GET', '/Role');
      assert.equal(res.status, 200, res.body);
      const admin = res.json.items.find((r: { Name: string }) => r.Name === 'Administrator');
      assert.equal(admin.BuiltIn, true);
      assert.match(admin.Grants[0], /^\*:\*:View,/);
      assert.deepEqual(
        res.json.items.map((r: { Name: string }) => r.Name).filter((n: string) => !n.startsWith('Test')),
        ['Administrator', 'Auditor', 'Operator', 'Viewer'],
      );
      assert.equal(res.json.next, null);
    });

    test('an unknown role or a hostile body is refused with 400 and changes nothing', async () => {
      assertError(await t.req('POST', '/User/bob', { body: { Roles: ['Operator', 'Wizard'] } }), 400, 'role', /Wizard/);
      assertError(await t.req('GET', '/User/bob'), 404, 'not created');
      assert.equal((await t.req('POST', '/User/bob', { body: { Roles: ['Viewer'] } })).status, 201);
      const before = (await t.req('GET', '/User/bob')).body;
      const bodies: Array<[string, string]> = [
        ['unknown role', '{"Roles": ["Wizard"]}'],
        ['roles not a list', '{"Roles": "Operator"}'],
        ['a role not a name', '{"Roles": [1]}'],
        ['a role twice', '{"Roles": ["Viewer", "Viewer"]}'],
        ['disabled not a boolean', '{"Disabled": "no"}'],
        ['short password', '{"Password": "short"}'],
        ['password not text', '{"Password": 12345678}'],
        ['unknown field', '{"Roles": ["Administrator"], "Admin": true}'],
        ['a list', '[{"Roles": ["Administrator"]}]'],
        ['a string', '"Administrator"'],
        ['null', 'null'],
        ['__proto__', '{"__proto__": {"Roles": ["Administrator"]}}'],
        ['constructor.prototype', '{"constructor": {"prototype": {"Roles": ["Administrator"]}}}'],
        ['malformed', '{"Roles": ["Administrator"'],
        ['many roles', JSON.stringify({ Roles: Array.from({ length: 101 }, () => 'Viewer') })],
      ];
      for (const [what, payload] of bodies) {
        const res = await t.req('PUT', '/User/bob', { payload, headers: { 'content-type': 'application/json' } });
        assertError(res, 400, what);
      }
      assertError(await t.req('POST', '/User/bad%20name', { body: {} }), 400, 'a user name with a blank');
      const wrongType = await t.req('PUT', '/User/bob', { payload: 'Roles=Administrator' });
      assert.equal(wrongType.status, 415, wrongType.body);
      assert.equal((await t.req('GET', '/User/bob')).body, before, 'bob is as he was');
    });

    test('the last enabled administrator cannot be disabled, demoted or deleted (409)', async () => {
      assertError(await t.req('PUT', '/User/admin', { body: { Disabled: true } }), 409, 'disable', /last/);
      assertError(await t.req('PUT', '/User/admin', { body: { Roles: ['Operator'] } }), 409, 'demote', /last/);
      assertError(await t.req('DELETE', '/User/admin'), 409, 'delete', /last/);
      assert.deepEqual((await t.req('GET', '/User/admin')).json.Roles, ['Administrator']);

      assert.equal((await t.req('POST', '/User/boss', { body: { Roles: ['Administrator'] } })).status, 201);
      const bossKey = (await t.req('POST', '/User/boss/apikeys', { body: {} })).json.Key as string;
      const demoted = await t.req('PUT', '/User/admin', { key: bossKey, body: { Roles: ['Viewer'] } });
      assert.equal(demoted.status, 200, 'another administrator is left');
      assertError(await t.req('DELETE', '/User/boss', { key: bossKey }), 409, 'boss is the last now');
      assert.equal(
        (await t.req('PUT', '/User/admin', { key: bossKey, body: { Roles: ['Administrator'] } })).status,
        200,
      );
      assert.equal((await t.req('DELETE', '/User/boss')).status, 204);
      assert.equal((await t.req('GET', READ, { key: bossKey })).status, 401, "a deleted user's keys end with it");
    });

    test('two administrators demoted at once: one change passes, the other is refused', async () => {
      const accounts = t.server.accounts;
      for (const name of ['ivy', 'jon'])
        assert.equal((await t.req('POST', `/User/${name}`, { body: { Roles: ['Administrator'] } })).status, 201);
      // admin steps aside (through the service: the change is the point, not who asks), so ivy and jon are the only
      // enabled administrators; then both are demoted at the same moment.
      await accounts.setDisabled('admin', true);
      const outcomes = await Promise.allSettled([
        accounts.setRoles('ivy', ['Viewer']),
        accounts.setRoles('jon', ['Viewer']),
      ]);
      await accounts.setDisabled('admin', false);
      assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
      const refusal = outcomes.find((o) => o.status === 'rejected');
      assert.match(String(refusal?.reason), /last enabled administrator/);
      const left = (await accounts.listUsers()).filter(
        (u) => ['ivy', 'jon'].includes(u.name) && u.roles.includes('Administrator'),
      );
      assert.equal(left.length, 1, 'one of them is still an administrator');
      for (const name of ['ivy', 'jon']) assert.equal((await t.req('DELETE', `/User/${name}`)).status, 204);
    });

    test('an API key made through the API: shown once, works, stops when revoked', async () => {
      assert.equal((await t.req('POST', '/User/carol', { body: { Roles: ['Viewer'] } })).status, 201);
      const made = await t.req('POST', '/User/carol/apikeys', { body: { Description: 'nightly report' } });
      assert.equal(made.status, 201, made.body);
      assert.deepEqual(Object.keys(made.json), ['Id', 'Key', 'Expires']);
      const { Id: id, Key: key } = made.json as { Id: string; Key: string };
      const now = clock.now();
      assert.equal(
        made.json.Expires,
        formatInstant(now + t.config.apiKeyMaxLifetimeMs, 'UTC'),
        'the longest lifetime when none is asked',
      );
      assert.equal((await t.req('GET', READ, { key })).status, 200, 'the key works');

      const listed = await t.req('GET', '/User/carol/apikeys');
      assert.equal(listed.status, 200, listed.body);
      assert.deepEqual(listed.json.items, [
        {
          Id: id,
          Description: 'nightly report',
          Created: formatInstant(now, 'UTC'),
          Expires: made.json.Expires,
          LastUsed: null,
        },
      ]);
      const hash = createHash('sha256').update(key).digest();
      for (const res of [listed, await t.req('GET', '/User/carol'), await t.req('GET', '/User')])
        for (const secret of [key, hash.toString('hex'), hash.toString('base64'), hash.toString('base64url')])
          assert.ok(!res.body.includes(secret), `never shown again: ${res.body}`);

      assertError(await t.req('DELETE', `/User/watcher/apikeys/${id}`), 404, "another user's key");
      assert.equal((await t.req('GET', READ, { key })).status, 200, 'still works');
      assert.equal((await t.req('DELETE', `/User/carol/apikeys/${id}`)).status, 204);
      assert.equal((await t.req('GET', READ, { key })).body, UNAUTHENTICATED, 'revoked at once');
      assertError(await t.req('DELETE', `/User/carol/apikeys/${id}`), 404, 'revoked twice');
      assert.deepEqual((await t.req('GET', '/User/carol/apikeys')).json, { items: [], next: null });
      assertError(await t.req('GET', '/User/nobody/apikeys'), 404, 'keys of a missing user');
      assertError(await t.req('POST', '/User/nobody/apikeys', { body: {} }), 404, 'a key for a missing user');
    });

    test('a key expires on its day, and a disabled user cannot use its keys', async () => {
      assert.equal((await t.req('POST', '/User/dave', { body: { Roles: ['Viewer'] } })).status, 201);
      const made = await t.req('POST', '/User/dave/apikeys', { body: { ExpiresInDays: 2 } });
      assert.equal(made.status, 201, made.body);
      const key = made.json.Key as string;
      assert.equal((await t.req('GET', READ, { key })).status, 200);
      clock.advance(2 * DAY - 60_000);
      assert.equal((await t.req('GET', READ, { key })).status, 200, 'a minute before it expires');
      clock.advance(60_000 + Authenticator.CACHE_MS);
      assert.equal((await t.req('GET', READ, { key })).body, UNAUTHENTICATED, 'expired');

      const second = (await t.req('POST', '/User/dave/apikeys', { body: { ExpiresInDays: 30 } })).json.Key as string;
      assert.equal((await t.req('GET', READ, { key: second })).status, 200);
      assert.equal((await t.req('PUT', '/User/dave', { body: { Disabled: true } })).status, 200);
      assert.equal((await t.req('GET', READ, { key: second })).body, UNAUTHENTICATED, 'the user is disabled');
      assert.equal((await t.req('PUT', '/User/dave', { body: { Disabled: false } })).status, 200);
      assert.equal((await t.req('GET', READ, { key: second })).status, 200, 'enabled again');

      for (const [what, body] of [
        ['no days', { ExpiresInDays: 0 }],
        ['too many days', { ExpiresInDays: 10_000 }],
        ['days not a number', { ExpiresInDays: '30' }],
        ['part of a day', { ExpiresInDays: 1.5 }],
        ['a long description', { Description: 'x'.repeat(201) }],
        ['unknown field', { Key: 'my-own-chosen-key-0123456789' }],
      ] as const)
        assertError(await t.req('POST', '/User/dave/apikeys', { body }), 400, what);
      assert.equal((await t.req('GET', '/User/dave/apikeys')).json.items.length, 2, 'no key was made');
    });
  });
}
