import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { postCreated } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * docs/architecture.md §18: `millrace audit verify` finds an entry edited or deleted in the database by hand and
 * names it; `millrace audit export --since` writes JSON lines; a CAR import and the CLI's account commands are
 * audited; the retention purge takes the oldest entries and verify still passes from the oldest kept one.
 */

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 10, 8, 0, 0);
const ZIP = { 'content-type': 'application/zip' };

/** Runs one SQL statement on the server's database, as someone with access to it would. */
async function sql(t: TestServer, text: string): Promise<void> {
  if (t.config.databaseUrl) {
    const client = new pg.Client({ connectionString: t.config.databaseUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new BetterSqlite3(join(t.config.dataDir, 'millrace.sqlite'));
  try {
    db.exec(text);
  } finally {
    db.close();
  }
}

const dbFlags = (t: TestServer) =>
  t.config.databaseUrl ? ['--database', t.config.databaseUrl] : ['--data', t.config.dataDir];

for (const backend of backends()) {
  describe(`audit verify, export and retention (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    before(async () => {
      t = await startTestServer(backend, { auditRetentionDays: 30 }, { clock });
    });
    after(() => t?.close());

    test('a CAR import and a CLI account command are audited; export writes JSON lines from --since', async () => {
      await postCreated(t, '/JobDefinition/GLOBAL.CarAudited', { JobDefinitionType: 'BASH', Script: 'echo car' });
      const car = await t.xml('GET', '/car/JobDefinition/GLOBAL.CarAudited');
      assert.equal(car.status, 200);
      assert.equal((await t.req('DELETE', '/JobDefinition/GLOBAL.CarAudited')).status, 204);
      const imported = await t.xml('PUT', '/car', { payload: car.raw as Buffer, headers: ZIP });
      assert.equal(imported.status, 200, imported.body);
      const entries = (await t.req('GET', '/AuditEntry?Type=JobDefinition&Key=GLOBAL.CarAudited')).json.items;
      assert.deepEqual(
        entries.map((e: { Action: string; Detail: string | null; User: string }) => [e.Action, e.Detail, e.User]),
        [
          ['create', 'import', 'admin'],
          ['delete', null, 'admin'],
          ['create', null, 'admin'],
        ],
      );

      const added = await runCli(['user', 'add', 'cliaudited', '--role', 'Viewer', ...dbFlags(t)]);
      assert.equal(added.code, 0, added.stderr);
      const [userEntry] = (await t.req('GET', '/AuditEntry?Type=User&Key=cliaudited')).json.items;
      assert.equal(userEntry.Action, 'create');
      assert.equal(userEntry.Interface, 'cli');
      assert.deepEqual(userEntry.Changes.find((c: { Field: string }) => c.Field === 'Roles').After, ['Viewer']);

      const since = '2026-01-10T08:00:00Z';
      const exported = await runCli(['audit', 'export', '--since', since, ...dbFlags(t)]);
      assert.equal(exported.code, 0, exported.stderr);
      const lines = exported.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.ok(lines.length >= 5, `${lines.length} lines`);
      const ids = lines.map((l) => l.Id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'oldest first',
      );
      assert.ok(lines.some((l) => l.ObjectKey === 'cliaudited'));
      const none = await runCli(['audit', 'export', '--since', '2030-01-01T00:00:00Z', ...dbFlags(t)]);
      assert.equal(none.stdout, '', 'nothing after --since');
    });

    test('verify passes, then fails naming an entry edited by hand, then one deleted by hand', async () => {
      for (const name of ['V1', 'V2', 'V3']) await postCreated(t, `/Queue/GLOBAL.${name}`, {});
      const ok = await runCli(['audit', 'verify', ...dbFlags(t)]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /audit log intact: \d+ entries checked/);

      const [v2] = (await t.req('GET', '/AuditEntry?Type=Queue&Key=GLOBAL.V2')).json.items;
      await sql(t, `UPDATE audit_entries SET actor = 'mallory' WHERE id = ${v2.Id}`);
      const edited = await runCli(['audit', 'verify', ...dbFlags(t)]);
      assert.equal(edited.code, 1);
      assert.match(edited.stderr, new RegExp(`broken at entry ${v2.Id}: entry ${v2.Id} was changed`));
      await sql(t, `UPDATE audit_entries SET actor = 'admin' WHERE id = ${v2.Id}`);
      assert.equal((await runCli(['audit', 'verify', ...dbFlags(t)])).code, 0, 'put back as it was: intact');

      await sql(t, `DELETE FROM audit_entries WHERE id = ${v2.Id}`);
      const deleted = await runCli(['audit', 'verify', ...dbFlags(t)]);
      assert.equal(deleted.code, 1);
      assert.match(deleted.stderr, new RegExp(`entries ${v2.Id} to ${v2.Id} are missing`));
    });

    test('the newest entry deleted by hand is found through the head', async () => {
      const before = await runCli(['audit', 'verify', ...dbFlags(t)]);
      assert.equal(before.code, 1, 'still broken by the previous test');
      // A fresh server on a fresh database for this one.
      const fresh = await startTestServer(backend);
      try {
        await postCreated(fresh, '/Queue/GLOBAL.Last', {});
        const [last] = (await fresh.req('GET', '/AuditEntry?Limit=1')).json.items;
        await sql(fresh, `DELETE FROM audit_entries WHERE id = ${last.Id}`);
        const res = await runCli(['audit', 'verify', ...dbFlags(fresh)]);
        assert.equal(res.code, 1);
        assert.match(res.stderr, new RegExp(`up to ${last.Id}, the last one written, are missing`));
      } finally {
        await fresh.close();
      }
    });
  });

  describe(`audit retention (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    before(async () => {
      t = await startTestServer(backend, { auditRetentionDays: 30 }, { clock });
    });
    after(() => t?.close());

    test('entries older than --audit-days go, oldest first; verify passes from the oldest kept', async () => {
      await postCreated(t, '/Queue/GLOBAL.Old1', {});
      await postCreated(t, '/Queue/GLOBAL.Old2', {});
      clock.set(T0 + 20 * DAY);
      await postCreated(t, '/Queue/GLOBAL.Young', {});
      clock.set(T0 + 40 * DAY);
      await t.server.engine.purgeHistory();
      const keys = (await t.req('GET', '/AuditEntry?Type=Queue')).json.items.map(
        (e: { ObjectKey: string }) => e.ObjectKey,
      );
      assert.ok(keys.includes('GLOBAL.Young'), 'younger than 30 days: kept');
      assert.ok(!keys.includes('GLOBAL.Old1') && !keys.includes('GLOBAL.Old2'), 'older: purged');
      const [purge] = (await t.req('GET', '/AuditEntry?Action=audit-purge')).json.items;
      assert.equal(purge.User, 'system');
      assert.match(purge.Detail, /^\d+ entries older than 30 days purged$/);
      const res = await runCli(['audit', 'verify', ...dbFlags(t)]);
      assert.equal(res.code, 0, res.stderr);
    });
  });
}
