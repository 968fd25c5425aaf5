import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ObjectType } from '../../../src/model/object-type.ts';
import { definitionTypes } from '../../../src/model/registry.ts';
import { type Entry, entriesAfter, mark } from '../../helpers/audit-entries.ts';
import { backends } from '../../helpers/backends.ts';
import { act, submit, waitForStatus } from '../../helpers/jobs.ts';
import { basicAuth, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * docs/architecture.md §18: every create, update and delete of every registry type, through the JSON and the XML
 * interface, writes exactly one audit entry naming the actor and the changed fields; job actions, replies and
 * sign-ins are audited; a rolled-back change leaves none; secrets never show; only Auditors and administrators read.
 */

const TYPES = definitionTypes();
const XML = { 'content-type': 'application/xml' };

/** Fields a type needs beyond its key (as the authorization matrix makes them). */
function bodyFor(type: ObjectType, name: string): Record<string, unknown> {
  const bodies: Record<string, Record<string, unknown>> = {
    JobDefinition: { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' },
    JobDefinitionAlertSource: { NamePattern: 'Aud*', Statuses: [{ Status: 'Error' }] },
    Credential: { RealUser: 'audit' },
    SubmitFrame: { Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }] },
    Deadline: { JobDefinition: `GLOBAL.${name}`, EndBy: '06:00' },
  };
  return bodies[type.name] ?? {};
}

function keyFor(type: ObjectType, name: string): string {
  if (type.key === 'name') return name;
  if (type.key === 'queueProvider') return `GLOBAL.${name}.GLOBAL.${name}`;
  return `GLOBAL.${name}`;
}

const creationOrder = (types: readonly ObjectType[]): ObjectType[] => [
  ...types.filter((t) => t.key !== 'queueProvider'),
  ...types.filter((t) => t.key === 'queueProvider'),
];

const about = (entries: Entry[], type: string, key: string) =>
  entries.filter((e) => e.ObjectType === type && e.ObjectKey === key);

const changed = (e: Entry, field: string) => e.Changes.find((c: Entry) => c.Field === field);

for (const backend of backends()) {
  describe(`audit trail (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t?.close());

    test('JSON: every registry type, created, changed and deleted, gives one entry each with actor and diff', async () => {
      const types = creationOrder(TYPES);
      for (const type of types) {
        const key = keyFor(type, 'Aud1');
        const start = await mark(t);
        const created = await t.req('POST', `/${type.name}/${key}`, { body: bodyFor(type, 'Aud1') });
        assert.equal(created.status, 201, `${type.name}: ${created.body}`);
        const [entry, ...more] = about(await entriesAfter(t, start), type.name, created.json.businessKey.split(':')[1]);
        assert.equal(more.length, 0, `${type.name}: one entry for the create`);
        assert.equal(entry?.Action, 'create', type.name);
        assert.equal(entry.User, 'admin');
        assert.equal(entry.Interface, 'json');
        assert.match(entry.ApiKeyId, /\S/, 'the key id is named');
        assert.equal(entry.ObjectUniqueId, created.json.uniqueId);
        assert.ok(entry.Changes.length > 0, `${type.name}: the diff holds the new fields`);
        assert.ok(
          entry.Changes.every((c: Entry) => c.Before === null),
          `${type.name}: nothing before a create`,
        );

        const mid = await mark(t);
        const put = await t.req('PUT', `/${type.name}/${key}`, { body: { Comment: `audited ${type.name}` } });
        assert.equal(put.status, 200, `${type.name}: ${put.body}`);
        const updates = await entriesAfter(t, mid);
        assert.equal(updates.length, 1, `${type.name}: one entry for the update`);
        assert.equal(updates[0].Action, 'update');
        assert.deepEqual(changed(updates[0], 'Comment'), {
          Field: 'Comment',
          Before: null,
          After: `audited ${type.name}`,
        });
      }
      for (const type of [...types].reverse()) {
        const key = keyFor(type, 'Aud1');
        const start = await mark(t);
        const res = await t.req('DELETE', `/${type.name}/${key}`);
        if (res.status === 404) continue; // went with its twin (a JobChain's definition)
        assert.equal(res.status, 204, `${type.name}: ${res.body}`);
        const entries = await entriesAfter(t, start);
        assert.equal(entries.length, 1, `${type.name}: one entry for the delete`);
        assert.equal(entries[0].Action, 'delete');
        assert.equal(entries[0].ObjectType, type.name);
        assert.equal(changed(entries[0], 'Comment')?.Before, `audited ${type.name}`, 'the diff holds what went');
        assert.equal(entries[0].Restorable, true);
      }
    });

    test('XML: every registry type put as a new object and put again changed gives one entry each', async () => {
      const types = creationOrder(TYPES);
      for (const type of types) {
        const res = await t.req('POST', `/${type.name}/${keyFor(type, 'Xsrc')}`, { body: bodyFor(type, 'Xsrc') });
        assert.equal(res.status, 201, `${type.name}: ${res.body}`);
      }
      for (const type of types) {
        const source = await t.xml('GET', `/object/${type.name}/${keyFor(type, 'Xsrc')}`);
        assert.equal(source.status, 200, `${type.name}: ${source.body}`);
        const payload = source.body.replaceAll('Xsrc', 'Xnew');
        const start = await mark(t);
        const created = await t.xml('PUT', '/xml', { payload, headers: XML });
        assert.ok(created.status < 300, `${type.name}: ${created.status} ${created.body}`);
        const entries = (await entriesAfter(t, start)).filter((e) => e.Action !== 'signin');
        const key = keyFor(type, 'Xnew');
        assert.equal(entries.length, 1, `${type.name}: ${JSON.stringify(entries.map((e) => e.Action))}`);
        assert.equal(entries[0].Action, 'create');
        assert.equal(entries[0].Interface, 'xml');
        assert.equal(entries[0].User, 'admin');
        assert.equal(entries[0].ObjectKey, about(entries, type.name, entries[0].ObjectKey)[0]?.ObjectKey);
        assert.equal(entries[0].ObjectType, type.name);

        const mid = await mark(t);
        const changedXml = payload.replace(/<Comment\s*\/>|<Comment>[^<]*<\/Comment>/, '<Comment>over xml</Comment>');
        assert.notEqual(changedXml, payload, `${type.name}: the XML has a Comment`);
        const put = await t.xml('PUT', '/xml', { payload: changedXml, headers: XML });
        assert.ok(put.status < 300, `${type.name}: ${put.status} ${put.body}`);
        const updates = (await entriesAfter(t, mid)).filter((e) => e.Action !== 'signin');
        assert.equal(updates.length, 1, `${type.name} ${key}: one entry for the change`);
        assert.equal(updates[0].Action, 'update');
        assert.equal(changed(updates[0], 'Comment')?.After, 'over xml');
      }
    });

    test('job actions, replies and rolled-back changes', async () => {
      const start = await mark(t);
      const job = await submit(t, 'GLOBAL.System_Sleep', {
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 1 }],
        RequestedStartTime: '2099/01/01 00:00:00,000 UTC',
      });
      const held = await act(t, job.jobId, 'hold');
      assert.equal(held.status, 200, held.body);
      const entries = about(await entriesAfter(t, start), 'Job', String(job.jobId));
      assert.deepEqual(
        entries.map((e) => [e.Action, e.User, e.Interface]),
        [
          ['submit', 'admin', 'json'],
          ['hold', 'admin', 'json'],
        ],
      );

      const asked = await submit(t, 'GLOBAL.System_OperatorMessage', {
        JobParameters: [{ Name: 'Message', InValueString: 'Go on?' }],
      });
      const waiting = await waitForStatus(t, asked.jobId, 'Console');
      const before = await mark(t);
      const reply = await t.req('PUT', `/OperatorMessage/${waiting.OperatorMessage}/reply`, { body: { Reply: 'Yes' } });
      assert.equal(reply.status, 200, reply.body);
      const replies = about(await entriesAfter(t, before), 'OperatorMessage', String(waiting.OperatorMessage));
      assert.deepEqual(
        replies.map((e) => [e.Action, e.User]),
        [['reply', 'admin']],
      );

      // Changes refused inside their transaction (a reference that does not exist, a built-in object) write nothing.
      const def = await t.req('POST', '/JobDefinition/GLOBAL.AudRefs', { body: { JobDefinitionType: 'BASH' } });
      assert.equal(def.status, 201, def.body);
      const mid = await mark(t);
      const rolledBack = await t.req('PUT', '/JobDefinition/GLOBAL.AudRefs', {
        body: { DefaultQueue: 'GLOBAL.NoSuchQueue' },
      });
      assert.equal(rolledBack.status, 400, rolledBack.body);
      assert.equal((await t.req('DELETE', '/Queue/GLOBAL.System')).status, 409);
      // An entry added in a transaction that then fails is rolled back with it.
      const failure = new Error('rolled back on purpose');
      await assert.rejects(
        t.server.store.transaction(async (tx) => {
          await tx.audit.add({
            time: Date.now(),
            actor: { user: 'rollback', interface: 'system', address: null, apiKeyId: null },
            action: 'update',
            object: null,
            detail: null,
            diff: null,
            restore: null,
          });
          throw failure;
        }),
        failure,
      );
      assert.deepEqual(await entriesAfter(t, mid), [], 'refused changes leave no entry');
    });

    test('sign-ins and failed sign-ins are audited with the address; API keys by id only', async () => {
      await t.loginWithGrants('audsign', 'audsign-password-1', ['Queue:*:View']);
      const start = await mark(t);
      const ok = await t.xml('GET', '/version', { auth: ['audsign', 'audsign-password-1'] });
      assert.equal(ok.status, 200);
      const bad = await t.xml('GET', '/version', { auth: ['audsign', 'wrong-password-1'] });
      assert.equal(bad.status, 401);
      const badKey = await t.req('GET', '/Queue/GLOBAL.System', { key: 'not-a-key-at-all-0123456789' });
      assert.equal(badKey.status, 401);
      const entries = (await entriesAfter(t, start)).filter((e) => e.Action.startsWith('signin'));
      assert.deepEqual(
        entries.map((e) => [e.Action, e.User, e.Interface]),
        [
          ['signin', 'audsign', 'xml'],
          ['signin-failed', 'audsign', 'xml'],
          ['signin-failed', '', 'json'],
        ],
      );
      for (const e of entries) assert.match(e.Address, /\S/, 'the address is kept');
      const text = JSON.stringify(await entriesAfter(t, 0));
      for (const secret of ['audsign-password-1', 'wrong-password-1', 'not-a-key-at-all-0123456789'])
        assert.ok(!text.includes(secret), `${secret} is not in the log`);
      assert.equal(basicAuth('a', 'b').startsWith('Basic'), true, 'basic auth is what the XML interface was given');
    });

    test('secrets are *** in every entry', async () => {
      const secrets = ['Cr3dential-S3cret-One', 'Cr3dential-S3cret-Two'];
      const start = await mark(t);
      const c = await t.req('POST', '/Credential/GLOBAL.AudCred', {
        body: { RealUser: 'svc', Password: secrets[0] },
      });
      assert.equal(c.status, 201, c.body);
      const u = await t.req('PUT', '/Credential/GLOBAL.AudCred', { body: { Password: secrets[1] } });
      assert.equal(u.status, 200, u.body);
      const entries = about(await entriesAfter(t, start), 'Credential', 'GLOBAL.AudCred');
      assert.deepEqual(
        entries.map((e) => changed(e, 'Password')),
        [
          { Field: 'Password', Before: null, After: '***' },
          { Field: 'Password', Before: '***', After: '***' },
        ],
      );
      await t.loginWithGrants('audpw', 'audpw-password-secret', ['Queue:*:View']);
      const text = JSON.stringify(await entriesAfter(t, 0));
      for (const secret of [...secrets, 'audpw-password-secret']) assert.ok(!text.includes(secret), secret);
    });

    test('a Viewer gets 403 on /AuditEntry; an Auditor reads it; bad filters are 400', async () => {
      const viewer = await t.keyWithRoles('audviewer', ['Viewer']);
      const auditor = await t.keyWithRoles('auditor1', ['Auditor']);
      const refused = await t.req('GET', '/AuditEntry', { key: viewer });
      assert.equal(refused.status, 403);
      assert.equal(refused.json.code, '403');
      assert.equal((await t.req('POST', '/AuditEntry/1/restore', { key: viewer })).status, 403);
      const read = await t.req('GET', '/AuditEntry?Type=Queue&Action=create&Limit=2', { key: auditor });
      assert.equal(read.status, 200, read.body);
      assert.ok(read.json.items.length > 0);
      for (const e of read.json.items) assert.deepEqual([e.ObjectType, e.Action], ['Queue', 'create']);
      const page2 = await t.req('GET', `/AuditEntry?Type=Queue&Action=create&Limit=2&After=${read.json.next}`, {
        key: auditor,
      });
      assert.equal(page2.status, 200);
      assert.ok(
        page2.json.items.every((e: Entry) => e.Id < read.json.items[1].Id),
        'the next page is older',
      );
      assert.equal((await t.req('GET', '/AuditEntry?Since=yesterday')).status, 400);
      assert.equal((await t.req('GET', '/AuditEntry?Nope=1')).status, 400);
      const byUser = await t.req('GET', '/AuditEntry?User=audsign&Action=signin');
      assert.ok(byUser.json.items.every((e: Entry) => e.User === 'audsign'));
    });

    test('restore brings a deleted JobDefinition back with its fields; a restore over a newer change is 409', async () => {
      const def = await t.req('POST', '/JobDefinition/GLOBAL.AudRestore', {
        body: { JobDefinitionType: 'BASH', Description: 'nightly load', Priority: 70, Script: 'echo restored' },
      });
      assert.equal(def.status, 201, def.body);
      const original = def.json;
      const changedRes = await t.req('PUT', '/JobDefinition/GLOBAL.AudRestore', { body: { Priority: 10 } });
      assert.equal(changedRes.status, 200);
      const start = await mark(t);
      assert.equal((await t.req('DELETE', '/JobDefinition/GLOBAL.AudRestore')).status, 204);
      const [deletion] = await entriesAfter(t, start);
      assert.equal(deletion.Action, 'delete');
      const update = (await t.req('GET', '/AuditEntry?Type=JobDefinition&Key=GLOBAL.AudRestore&Action=update')).json
        .items[0];

      const restored = await t.req('POST', `/AuditEntry/${deletion.Id}/restore`);
      assert.equal(restored.status, 200, restored.body);
      const back = (await t.req('GET', '/JobDefinition/GLOBAL.AudRestore')).json;
      assert.equal(back.Description, 'nightly load');
      assert.equal(back.Priority, 10);
      assert.equal(back.Script, original.Script);
      const [restoreEntry] = await entriesAfter(t, deletion.Id);
      assert.equal(restoreEntry.Action, 'restore');
      assert.equal(restoreEntry.Detail, `from AuditEntry:${deletion.Id}`);

      // The update's entry is older than the delete and the restore: the object changed since.
      const stale = await t.req('POST', `/AuditEntry/${update.Id}/restore`);
      assert.equal(stale.status, 409, stale.body);
      assert.equal(stale.json.code, '409');
      assert.equal((await t.req('POST', `/AuditEntry/${deletion.Id}/restore`)).status, 409);

      // The newest change's before side is put back.
      const mid = await mark(t);
      assert.equal((await t.req('PUT', '/JobDefinition/GLOBAL.AudRestore', { body: { Priority: 99 } })).status, 200);
      const [latest] = await entriesAfter(t, mid);
      const undo = await t.req('POST', `/AuditEntry/${latest.Id}/restore`);
      assert.equal(undo.status, 200, undo.body);
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.AudRestore')).json.Priority, 10);
      assert.equal((await t.req('POST', '/AuditEntry/999999999/restore')).status, 404);
    });
  });
}
