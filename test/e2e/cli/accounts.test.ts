import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CliResult,
  httpGet,
  JSON_BASE,
  killServers,
  runCli,
  type ServeProcess,
  startServe,
  suiteDataDir,
} from '../../helpers/cli.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { HANG_MS } from '../../helpers/wait.ts';

/**
 * `millrace user …` and `millrace apikey …` as an administrator runs them, then `millrace serve` on the same
 * database: the keys made by the CLI open the JSON interface, and a revocation takes effect within seconds.
 */

const QUEUE = `${JSON_BASE}/Queue/GLOBAL.Default`;

function assertOk(res: CliResult, what: string): void {
  assert.equal(res.code, 0, `${what} exited ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

/** The id and key printed by `apikey create`. */
function printedKey(res: CliResult): { id: string; key: string } {
  const id = /^id: +(\S+)$/m.exec(res.stdout)?.[1];
  const key = /^key: +(\S+)$/m.exec(res.stdout)?.[1];
  assert.ok(id && key, `apikey create printed an id and a key:\n${res.stdout}`);
  return { id, key };
}

/** The credentials printed on a first start, when any. */
function firstStartSecrets(output: string): { password?: string; apiKey?: string } {
  const password = /^ +password: +(\S+)$/m.exec(output)?.[1];
  const apiKey = /^ +API key: +(\S+)$/m.exec(output)?.[1];
  return { ...(password ? { password } : {}), ...(apiKey ? { apiKey } : {}) };
}

/**
 * Polls until `key` gets 401; fails if it still works `withinMs` after the call (a hang: that the server sees the
 * change within its 2 s key cache is proven on the virtual clock, test/integration/auth/api-key.test.ts).
 */
async function expectRefusedWithin(port: number, key: string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  let last = await httpGet(port, QUEUE, key);
  while (last.status !== 401 && Date.now() < deadline) {
    await sleep(100);
    last = await httpGet(port, QUEUE, key);
  }
  assert.equal(last.status, 401, `the revoked key still gets ${last.status} after ${withinMs} ms`);
  assert.deepEqual(last.json, { code: '401', message: 'Authentication required' });
  assert.ok(last.headers['www-authenticate'], 'WWW-Authenticate header');
}

/** Stops the server with SIGTERM: it exits 0 and its port no longer answers. */
async function stopCleanly(server: ServeProcess): Promise<void> {
  const code = await server.stop();
  assert.equal(code, 0, `exit code after SIGTERM\n${server.output()}`);
  assert.ok(server.child.pid !== undefined);
  assert.throws(() => process.kill(server.child.pid as number, 0), { code: 'ESRCH' }, 'the process is gone');
  await assert.rejects(httpGet(server.port, QUEUE), { code: 'ECONNREFUSED' }, 'nothing listens on the port');
}

describe('millrace user / apikey, then serve (SQLite data folder)', () => {
  const dataDir = suiteDataDir('e2e-cli');
  const db = (): string[] => ['--data', dataDir()];
  let alice: { id: string; key: string };
  let server: ServeProcess | undefined;
  let adminKey: string;

  test('user add, then user list shows the user and its role', async () => {
    const added = await runCli(['user', 'add', 'alice', '--role', 'Operator', ...db()]);
    assertOk(added, 'user add');
    assert.match(added.stdout, /alice/);
    const list = await runCli(['user', 'list', ...db()]);
    assertOk(list, 'user list');
    assert.match(list.stdout, /^alice\tOperator\t/m);
  });

  test('apikey create prints the key once; apikey list lists it without the key', async () => {
    const created = await runCli(['apikey', 'create', '--user', 'alice', '--description', 'ci', ...db()]);
    assertOk(created, 'apikey create');
    alice = printedKey(created);
    assert.ok(alice.key.length >= 32, 'a long random key');

    const list = await runCli(['apikey', 'list', ...db()]);
    assertOk(list, 'apikey list');
    const line = list.stdout.split('\n').find((l) => l.startsWith(`${alice.id}\t`));
    assert.ok(line, `apikey list shows ${alice.id}:\n${list.stdout}`);
    assert.match(line, /\talice\t/);
    assert.match(line, /\tci$/);
    assert.ok(!list.stdout.includes(alice.key), 'the key itself is never listed');
    assert.ok(!list.stdout.includes(alice.key.slice(-20)), 'nor a part of it');
  });

  test('user role-set creates a custom role that role-list shows', async () => {
    const set = await runCli(['user', 'role-set', 'Night', '--grant', 'JobDefinition:GLOBAL:View,Submit', ...db()]);
    assertOk(set, 'user role-set');
    const list = await runCli(['user', 'role-list', ...db()]);
    assertOk(list, 'user role-list');
    assert.match(list.stdout, /^Night\tJobDefinition:GLOBAL:View,Submit$/m);
    for (const builtin of ['Administrator', 'Operator', 'Viewer'])
      assert.match(list.stdout, new RegExp(`^${builtin}\\b`, 'm'));
  });

  test('bad input exits non-zero with a message on stderr', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['user', 'add', 'alice'], /alice.*exist/],
      [['user', 'add', 'bob', '--role', 'Nope'], /Nope/],
      [['apikey', 'revoke', 'nosuch'], /nosuch/],
      [['user', 'role-set', 'X', '--grant', 'Bogus:GLOBAL:View'], /Bogus/],
      [['apikey', 'create', '--user', 'nobody'], /nobody/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli([...args, ...db()])));
    for (const [i, res] of results.entries()) {
      const [args, message] = cases[i] as [string[], RegExp];
      assert.notEqual(res.code, 0, `${args.join(' ')} should fail:\n${res.stdout}`);
      assert.match(res.stderr, message, `${args.join(' ')}: stderr names the problem`);
      assert.doesNotMatch(res.stderr, /\n\s+at /, `${args.join(' ')}: no stack trace`);
    }
    const [users, roles] = await Promise.all([
      runCli(['user', 'list', ...db()]),
      runCli(['user', 'role-list', ...db()]),
    ]);
    assert.doesNotMatch(users.stdout, /^bob\t/m, 'no user was added by the failed command');
    assert.doesNotMatch(roles.stdout, /^X\t/m, 'no role was added by the failed command');
  });

  test('the first start prints the administrator credentials, and the printed key works', async () => {
    server = await startServe(db());
    const out = server.output();
    assert.match(out, /First start: administrator "admin"/);
    const secrets = firstStartSecrets(out);
    assert.ok(secrets.password && secrets.password.length >= 12, `a generated password:\n${out}`);
    assert.ok(secrets.apiKey, `a generated API key:\n${out}`);
    adminKey = secrets.apiKey;
    const res = await httpGet(server.port, QUEUE, adminKey);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.businessKey, 'Queue:GLOBAL.Default');
  });

  test('a key made by the CLI reads through the server, and gets 401 once apikey revoke has run', async () => {
    assert.ok(server, 'the server runs');
    const res = await httpGet(server.port, QUEUE, alice.key);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.businessKey, 'Queue:GLOBAL.Default');

    const revoked = await runCli(['apikey', 'revoke', alice.id, ...db()]);
    assertOk(revoked, 'apikey revoke');
    await expectRefusedWithin(server.port, alice.key, HANG_MS);
    assert.equal((await httpGet(server.port, QUEUE, adminKey)).status, 200, 'other keys keep working');

    const again = await runCli(['apikey', 'revoke', alice.id, ...db()]);
    assert.notEqual(again.code, 0, 'a key is revoked once');
  });

  test('SIGTERM stops the server and leaves no process behind', async () => {
    assert.ok(server, 'the server runs');
    await stopCleanly(server);
    server = undefined;
  });

  test('a second start of the same data folder prints no credentials; the first key still works', async () => {
    server = await startServe(db());
    const out = server.output();
    assert.doesNotMatch(out, /First start/);
    assert.deepEqual(firstStartSecrets(out), {});
    assert.ok(!out.includes(adminKey), 'the admin key is not printed again');
    assert.equal((await httpGet(server.port, QUEUE, adminKey)).status, 200);
    await stopCleanly(server);
    server = undefined;
  });
});

describe('first start with MILLRACE_ADMIN_API_KEY and MILLRACE_ADMIN_PASSWORD', () => {
  const envKey = 'e2e-admin-key-from-the-environment-0123';
  const envPassword = 'e2e-admin-password-from-env';
  const dataDir = suiteDataDir('e2e-env');

  test('the given secrets are used and not printed', async () => {
    const server = await startServe(['--data', dataDir()], {
      MILLRACE_ADMIN_API_KEY: envKey,
      MILLRACE_ADMIN_PASSWORD: envPassword,
    });
    const out = server.output();
    assert.deepEqual(firstStartSecrets(out), {}, `no generated password or key:\n${out}`);
    assert.ok(!out.includes(envKey), 'the key from the environment is not echoed');
    assert.ok(!out.includes(envPassword), 'the password from the environment is not echoed');
    const res = await httpGet(server.port, QUEUE, envKey);
    assert.equal(res.status, 200, res.body);
    assert.equal((await httpGet(server.port, QUEUE, `${envKey}x`)).status, 401);
    await stopCleanly(server);
  });
});

describe('millrace user / apikey, then serve (PostgreSQL)', {
  skip: pgAdminUrl() ? false : 'MILLRACE_TEST_PG_URL not set',
}, () => {
  const dataDir = suiteDataDir('e2e-cli-pg');
  let database: { url: string; drop(): Promise<void> };
  const db = (): string[] => ['--data', dataDir(), '--database', database.url];

  before(async () => {
    database = await createPgDatabase();
  });
  after(async () => {
    await killServers();
    await database?.drop();
  });

  test('a CLI key reads through the server, and gets 401 once apikey revoke has run', async () => {
    assertOk(await runCli(['user', 'add', 'carol', '--role', 'Viewer', ...db()]), 'user add');
    const created = await runCli(['apikey', 'create', '--user', 'carol', '--description', 'pg', ...db()]);
    assertOk(created, 'apikey create');
    const carol = printedKey(created);

    const server = await startServe(db());
    const secrets = firstStartSecrets(server.output());
    assert.ok(secrets.apiKey && secrets.password, `first start credentials:\n${server.output()}`);
    assert.equal((await httpGet(server.port, QUEUE, secrets.apiKey)).status, 200, 'the printed admin key works');

    const res = await httpGet(server.port, QUEUE, carol.key);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.businessKey, 'Queue:GLOBAL.Default');
    assertOk(await runCli(['apikey', 'revoke', carol.id, ...db()]), 'apikey revoke');
    await expectRefusedWithin(server.port, carol.key, HANG_MS);
    await stopCleanly(server);
  });
});
