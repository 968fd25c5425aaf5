import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Entry, entriesAfter, mark } from '../../helpers/audit-entries.ts';
import { backends } from '../../helpers/backends.ts';
import { clearById, createDefinition, raise } from '../../helpers/events.ts';
import { requestFrom } from '../../helpers/from-address.ts';
import { act, postCreated as post, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startIdentityProvider, type TestIdentityProvider } from '../../helpers/oidc-provider.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * docs/architecture.md §18 for the write paths beside the object and job-action routes: users and API keys over the
 * JSON interface, bulk job actions, markcompleted, PATCH /Job, deleting an event or an operator message, forwarding
 * and delegating a user message, bearer tokens, and the client address behind a trusted proxy (`--trust-proxy`).
 * Each writes exactly the entries a person reading the log expects, naming who did it, through what, from where.
 */

const PROXY = '127.0.0.2';
const STRANGER = '127.0.0.3';
const LATER = '2099/01/01 00:00:00,000 UTC';
const approval = {
  JobDefinitionType: 'UserMessage',
  DefaultQueue: 'GLOBAL.System',
  UserMessage: {
    Text: 'Release the payroll?',
    Responses: [{ Response: 'Approve', Status: 'Completed', ReturnCode: 0 }],
    Participants: ['bob'],
  },
};

/** What a reader of an entry looks at first: action, object, actor and detail. */
const summary = (e: Entry) => ({
  Action: e.Action,
  Object: e.ObjectType === null ? null : `${e.ObjectType}:${e.ObjectKey}`,
  User: e.User,
  Interface: e.Interface,
  Detail: e.Detail,
});

/** A job that waits far in the future (Scheduled): every action a test asks of it applies. */
const later = async (t: TestServer): Promise<number> =>
  (
    await submit(t, 'GLOBAL.System_Sleep', {
      JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 1 }],
      RequestedStartTime: LATER,
    })
  ).jobId;

describe('audit entries of the newer write paths', () => {
  let idp: TestIdentityProvider;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-audit-new-'));
    idp = await startIdentityProvider({ users: {}, clients: { robot: ['millrace-admins'] }, accessTokenSeconds: 300 });
  });
  after(async () => {
    await idp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const backend of backends()) {
    describe(backend.name, () => {
      let t: TestServer;
      let origin = '';
      let adminKeyIds: string[] = [];
      /** The admin's entries through the JSON interface with its API key, from the inject client (127.0.0.1). */
      const assertAdminJson = (entries: Entry[]) => {
        for (const e of entries) {
          assert.deepEqual([e.User, e.Interface], ['admin', 'json'], JSON.stringify(e));
          assert.ok(adminKeyIds.includes(e.ApiKeyId), `the admin's key id is named: ${JSON.stringify(e)}`);
          assert.match(e.Address, /\S/, 'the address is kept');
        }
      };

      before(async () => {
        t = await startTestServer(backend, { oidc: await idp.settings(dir), trustProxy: [PROXY] }, { listen: true });
        const { port } = t.server.app.server.address() as { port: number };
        origin = `http://127.0.0.1:${port}`;
        const keys = await t.req('GET', '/User/admin/apikeys');
        assert.equal(keys.status, 200, keys.body);
        adminKeyIds = keys.json.items.map((k: { Id: string }) => k.Id);
        assert.ok(adminKeyIds.length > 0);
      });
      after(() => t?.close());

      test('users and API keys over the JSON API: one entry each, by the administrator; no password, no key', async () => {
        const passwords = ['Audrey-Password-One-1', 'Audrey-Password-Two-2'];
        const start = await mark(t);
        const made = await t.req('POST', '/User/audrey', { body: { Roles: ['Operator'], Password: passwords[0] } });
        assert.equal(made.status, 201, made.body);
        const changed = await t.req('PUT', '/User/audrey', { body: { Roles: ['Viewer'], Password: passwords[1] } });
        assert.equal(changed.status, 200, changed.body);
        const key = await t.req('POST', '/User/audrey/apikeys', { body: { Description: 'audited key' } });
        assert.equal(key.status, 201, key.body);
        const { Id: keyId, Key: secretKey } = key.json as { Id: string; Key: string };
        assert.equal((await t.req('DELETE', `/User/audrey/apikeys/${keyId}`)).status, 204);
        assert.equal((await t.req('DELETE', '/User/audrey')).status, 204);

        const entries = await entriesAfter(t, start);
        assert.deepEqual(
          entries.map((e) => [e.Action, `${e.ObjectType}:${e.ObjectKey}`]),
          [
            ['create', 'User:audrey'],
            ['update', 'User:audrey'],
            ['create', `ApiKey:${keyId}`],
            ['revoke', `ApiKey:${keyId}`],
            ['delete', 'User:audrey'],
          ],
        );
        assertAdminJson(entries);
        const field = (e: Entry, name: string) => e.Changes.find((c: Entry) => c.Field === name);
        assert.deepEqual(field(entries[1], 'Roles'), { Field: 'Roles', Before: ['Operator'], After: ['Viewer'] });
        assert.equal(field(entries[1], 'Password')?.After, '***', 'a changed password shows as ***');
        const text = JSON.stringify(await entriesAfter(t, 0));
        for (const secret of [...passwords, secretKey])
          assert.ok(!text.includes(secret), `${secret} is not in the log`);
      });

      test('a bulk hold by JobIds: one entry per job held, detail naming the request; a job skipped has none', async () => {
        const ids = [await later(t), await later(t), await later(t)];
        const heldAlready = await later(t);
        assert.equal((await act(t, heldAlready, 'hold')).status, 200);
        const start = await mark(t);
        const res = await t.req('POST', '/Job/bulk/hold', {
          body: { JobIds: [...ids, heldAlready], Comment: 'freeze for the audit', Async: true },
        });
        assert.equal(res.status, 202, res.body);
        const requestId = res.json.RequestId as string;
        const final = await waitFor('the bulk request done', async () => {
          const p = await t.req('GET', `/Job/bulk/requests/${requestId}`);
          assert.equal(p.status, 200, p.body);
          return p.json.Status === 'Running' ? undefined : p.json;
        });
        assert.deepEqual([final.Status, final.Done, final.Skipped.length], ['Done', 3, 1], JSON.stringify(final));

        const entries = await entriesAfter(t, start);
        const detail = `hold (bulk request ${requestId}): freeze for the audit`;
        assert.deepEqual(
          entries.map(summary),
          ids.map((id) => ({ Action: 'bulk', Object: `Job:${id}`, User: 'admin', Interface: 'json', Detail: detail })),
        );
        assertAdminJson(entries);
        for (const [i, e] of entries.entries())
          assert.equal(e.ObjectUniqueId, (await t.req('GET', `/Job/${ids[i]}`)).json.uniqueId);
      });

      test('markcompleted keeps its comment; PATCH /Job names the job', async () => {
        await post(t, '/JobDefinition/GLOBAL.AudFails', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
        const failed = await submit(t, 'GLOBAL.AudFails');
        await waitForStatus(t, failed.jobId, 'Error');
        const waiting = await later(t);
        const start = await mark(t);
        const marked = await act(t, failed.jobId, 'markcompleted', { Comment: 'Loaded by hand after the outage' });
        assert.equal(marked.status, 200, marked.body);
        const patched = await t.req('PATCH', `/Job/${waiting}`, { body: { Priority: 70 } });
        assert.equal(patched.status, 200, patched.body);

        const entries = await entriesAfter(t, start);
        assert.deepEqual(entries.map(summary), [
          {
            Action: 'markcompleted',
            Object: `Job:${failed.jobId}`,
            User: 'admin',
            Interface: 'json',
            Detail: 'Loaded by hand after the outage',
          },
          { Action: 'modify', Object: `Job:${waiting}`, User: 'admin', Interface: 'json', Detail: null },
        ]);
        assertAdminJson(entries);
        assert.equal(entries[1].ObjectUniqueId, patched.json.uniqueId);
      });

      test('deleting an event and an operator message, forwarding and delegating a message name their object', async () => {
        await createDefinition(t, 'GLOBAL.AudEvent');
        const raised = await raise(t, 'GLOBAL.AudEvent');
        assert.equal((await clearById(t, raised.eventId)).status, 200);
        const asked = await submit(t, 'GLOBAL.System_OperatorMessage', {
          JobParameters: [{ Name: 'Message', InValueString: 'Tape loaded?' }],
        });
        const om = (await waitForStatus(t, asked.jobId, 'Console')).OperatorMessage;
        assert.equal((await t.req('PUT', `/OperatorMessage/${om}/reply`, { body: { Reply: 'Yes' } })).status, 200);
        await waitForStatus(t, asked.jobId, 'Completed');
        const grants = ['UserMessage:GLOBAL:View,Reply', 'Job:GLOBAL:View'];
        const bob = await t.keyWithGrants('bob', grants);
        await t.keyWithGrants('carol', grants);
        await post(t, '/JobDefinition/GLOBAL.AudPayroll', approval);
        const messages: number[] = [];
        for (let i = 0; i < 2; i++) {
          const job = await submit(t, 'GLOBAL.AudPayroll');
          messages.push((await waitForStatus(t, job.jobId, 'Console')).UserMessage);
        }

        const start = await mark(t);
        assert.equal((await t.req('DELETE', `/Event/${raised.eventId}`)).status, 204);
        assert.equal((await t.req('DELETE', `/OperatorMessage/${om}`)).status, 204);
        const forward = { body: { To: ['carol'], Comment: 'away' }, key: bob };
        assert.equal((await t.req('PUT', `/UserMessage/${messages[0]}/forward`, forward)).status, 200);
        assert.equal((await t.req('PUT', `/UserMessage/${messages[1]}/delegate`, forward)).status, 200);

        const entries = await entriesAfter(t, start);
        assert.deepEqual(entries.map(summary), [
          {
            Action: 'delete',
            Object: `Event:${raised.eventId}`,
            User: 'admin',
            Interface: 'json',
            Detail: `Deleted Event:${raised.eventId}`,
          },
          {
            Action: 'delete',
            Object: `OperatorMessage:${om}`,
            User: 'admin',
            Interface: 'json',
            Detail: `Deleted OperatorMessage:${om}`,
          },
          {
            Action: 'forward',
            Object: `UserMessage:${messages[0]}`,
            User: 'bob',
            Interface: 'json',
            Detail: `Forwarded UserMessage:${messages[0]}`,
          },
          {
            Action: 'delegate',
            Object: `UserMessage:${messages[1]}`,
            User: 'bob',
            Interface: 'json',
            Detail: `Delegated UserMessage:${messages[1]}`,
          },
        ]);
        assertAdminJson(entries.slice(0, 2));
        const bobKeys = (await t.req('GET', '/User/bob/apikeys')).json.items.map((k: { Id: string }) => k.Id);
        for (const e of entries.slice(2)) assert.ok(bobKeys.includes(e.ApiKeyId), "bob's key id is named");
      });

      test('bearer tokens: a refused one is signin-failed (never the token); an accepted one acts as json', async () => {
        const refusedToken = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJub2JvZHkifQ.not-signed-at-all';
        const start = await mark(t);
        const refused = await t.req('GET', '/Queue/GLOBAL.System', {
          key: null,
          headers: { authorization: `Bearer ${refusedToken}` },
        });
        assert.equal(refused.status, 401, refused.body);
        const job = await later(t);
        const { token } = await idp.clientToken('robot');
        const held = await t.req('PUT', `/Job/${job}/hold`, {
          key: null,
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(held.status, 200, held.body);

        const entries = (await entriesAfter(t, start)).filter((e) => e.Action !== 'submit');
        assert.deepEqual(
          entries.map((e) => [e.Action, e.User, e.Interface, e.ApiKeyId]),
          [
            ['signin-failed', '', 'json', null],
            ['hold', 'robot', 'json', null],
          ],
        );
        for (const e of entries) assert.match(e.Address, /\S/, 'the address is kept');
        assert.equal(`${entries[1].ObjectType}:${entries[1].ObjectKey}`, `Job:${job}`);
        const text = JSON.stringify(await entriesAfter(t, 0));
        for (const secret of [refusedToken, token]) assert.ok(!text.includes(secret), 'no token is in the log');
      });

      test("behind a trusted proxy the entry's address is the forwarded client's; from another peer, the peer's", async () => {
        const url = (path: string) => `${origin}${t.base}${path}`;
        const jobs = [await later(t), await later(t)];
        const start = await mark(t);
        const viaProxy = await requestFrom(PROXY, url(`/Job/${jobs[0]}/hold`), {
          method: 'PUT',
          headers: { 'X-API-Key': ADMIN_KEY, 'X-Forwarded-For': '198.51.100.7' },
        });
        assert.equal(viaProxy.status, 200, viaProxy.body);
        const refused = await requestFrom(PROXY, url('/Queue/GLOBAL.System'), {
          headers: { 'X-API-Key': 'not-a-key-behind-the-proxy', 'X-Forwarded-For': '198.51.100.8' },
        });
        assert.equal(refused.status, 401, refused.body);
        const fromStranger = await requestFrom(STRANGER, url(`/Job/${jobs[1]}/hold`), {
          method: 'PUT',
          headers: { 'X-API-Key': ADMIN_KEY, 'X-Forwarded-For': '198.51.100.9' },
        });
        assert.equal(fromStranger.status, 200, fromStranger.body);

        const entries = await entriesAfter(t, start);
        assert.deepEqual(
          entries.map((e) => [e.Action, e.ObjectKey, e.Address]),
          [
            ['hold', String(jobs[0]), '198.51.100.7'],
            ['signin-failed', null, '198.51.100.8'],
            ['hold', String(jobs[1]), STRANGER],
          ],
        );
      });
    });
  }
});
