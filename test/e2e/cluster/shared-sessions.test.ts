import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { type Config, DEFAULTS, interfacePaths } from '../../../src/config/config.ts';
import { createServer, listen, type MillraceServer } from '../../../src/main.ts';
import { SharedFailureCounts } from '../../../src/services/shared-failure-counts.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { type AddressedResponse, requestFrom } from '../../helpers/from-address.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { ADMIN_KEY, ADMIN_PASSWORD } from '../../helpers/server.ts';

/**
 * docs/architecture.md §10 and §16: the dashboard's sessions live in the database, so two server nodes on one
 * PostgreSQL (two app instances, real sockets) serve the same signed-in users: a session begun on one node works
 * on the other, a sign-out or a disabled user ends it on both, a node started again keeps it, and failed
 * dashboard sign-ins are counted for both nodes together.
 */

const START = Date.UTC(2026, 10, 26, 11, 0, 0);
const FAILURES_PER_MINUTE = 4;

interface Signed {
  cookie: string;
  csrf: string;
}

describe('dashboard sessions on two nodes of one PostgreSQL', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  const clock = new FakeClock(START);
  const nodes: MillraceServer[] = [];
  const configs: Config[] = [];
  const origins: string[] = [];
  const dirs: string[] = [];
  let db: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  const env = {
    MILLRACE_ADMIN_PASSWORD: ADMIN_PASSWORD,
    MILLRACE_ADMIN_API_KEY: ADMIN_KEY,
    MILLRACE_SECRET_KEY: randomBytes(32).toString('base64'),
  };
  let ui = '';
  let jsonBase = '';

  async function startNode(i: number): Promise<void> {
    const config = configs[i] as Config;
    const server = await createServer(config, { logger: pino({ level: 'silent' }), env, clock });
    await listen(server, config);
    nodes[i] = server;
    origins[i] = `http://127.0.0.1:${(server.app.server.address() as { port: number }).port}`;
  }

  before(async () => {
    db = await createPgDatabase();
    for (const id of ['n1', 'n2']) {
      const dataDir = await mkdtemp(join(tmpdir(), `millrace-test-sessions-${id}-`));
      dirs.push(dataDir);
      configs.push({
        ...DEFAULTS,
        authFailuresPerMinute: FAILURES_PER_MINUTE,
        limits: { ...DEFAULTS.limits, maxEventLoopDelayMs: 60_000 },
        localAgent: false,
        port: 0,
        dataDir,
        databaseUrl: db.url,
        nodeId: id,
      });
      await startNode(configs.length - 1);
    }
    const paths = interfacePaths(configs[0] as Config);
    ui = `${paths.root}/ui`;
    jsonBase = paths.jsonBase;
  });
  after(async () => {
    for (const n of nodes) await n.close().catch(() => {});
    await db?.drop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  const send = (
    node: number,
    method: string,
    path: string,
    o: { cookie?: string; csrf?: string; body?: unknown; key?: string; from?: string } = {},
  ): Promise<AddressedResponse> =>
    requestFrom(o.from ?? '127.0.0.1', `${origins[node]}${path}`, {
      method,
      headers: {
        ...(o.cookie ? { cookie: o.cookie } : {}),
        ...(o.csrf ? { 'x-millrace-csrf': o.csrf } : {}),
        ...(o.key ? { 'x-api-key': o.key } : {}),
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    });

  async function signIn(node: number, user: string, password: string): Promise<Signed> {
    const res = await send(node, 'POST', `${ui}/api/session`, { body: { user, password } });
    assert.equal(res.status, 200, res.body);
    const cookie = String(res.headers['set-cookie']).split(';')[0] as string;
    return { cookie, csrf: JSON.parse(res.body).csrf };
  }
  const whoAmI = async (node: number, s: Signed) => {
    const res = await send(node, 'GET', `${ui}/api/session`, { cookie: s.cookie });
    return res.status === 200 ? (JSON.parse(res.body).user as string) : res.status;
  };
  const hold = (node: number, s: Signed, held: boolean) =>
    send(node, 'PUT', `${jsonBase}/Queue/GLOBAL.Default`, { cookie: s.cookie, csrf: s.csrf, body: { Held: held } });

  test('signed in through node A, the next requests through node B work, writes included', async () => {
    const s = await signIn(0, 'admin', ADMIN_PASSWORD);
    assert.equal(await whoAmI(1, s), 'admin');
    const held = await hold(1, s, true);
    assert.equal(held.status, 200, held.body);
    assert.equal(JSON.parse(held.body).Held, true);
    assert.equal((await hold(0, s, false)).status, 200, 'and back through A');
  });

  test('a sign-out through node B ends the session on node A', async () => {
    const s = await signIn(0, 'admin', ADMIN_PASSWORD);
    assert.equal(await whoAmI(0, s), 'admin');
    const out = await send(1, 'DELETE', `${ui}/api/session`, { cookie: s.cookie, csrf: s.csrf });
    assert.equal(out.status, 204, out.body);
    assert.equal(await whoAmI(0, s), 401);
    assert.equal((await send(0, 'GET', `${jsonBase}/Queue/GLOBAL.Default`, { cookie: s.cookie })).status, 401);
  });

  test('disabling a user through node A ends its session on node B at once', async () => {
    const made = await send(0, 'POST', `${jsonBase}/User/fiona`, {
      key: ADMIN_KEY,
      body: { Roles: ['Viewer'], Password: 'fiona-password-1' },
    });
    assert.equal(made.status, 201, made.body);
    const s = await signIn(1, 'fiona', 'fiona-password-1');
    assert.equal(await whoAmI(1, s), 'fiona');
    const disabled = await send(0, 'PUT', `${jsonBase}/User/fiona`, { key: ADMIN_KEY, body: { Disabled: true } });
    assert.equal(disabled.status, 200, disabled.body);
    assert.equal(await whoAmI(1, s), 401, 'no clock moved: the end is seen at once');
    assert.equal(await whoAmI(0, s), 401);
  });

  test('a node started again keeps the sessions it served', async () => {
    const s = await signIn(0, 'admin', ADMIN_PASSWORD);
    await nodes[0]?.close();
    await startNode(0);
    assert.equal(await whoAmI(0, s), 'admin');
    assert.equal((await hold(0, s, false)).status, 200, 'the CSRF token is the same after the restart');
  });

  test('failed dashboard sign-ins count on both nodes together', async () => {
    const from = '127.0.0.23';
    const statuses: number[] = [];
    for (let i = 0; i < FAILURES_PER_MINUTE; i++) {
      clock.advance(SharedFailureCounts.FRESH_MS);
      const res = await send(i % 2, 'POST', `${ui}/api/session`, {
        from,
        body: { user: 'admin', password: `guess-${i}` },
      });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, Array(FAILURES_PER_MINUTE).fill(401), 'each node saw only half of them');
    clock.advance(SharedFailureCounts.FRESH_MS);
    for (const node of [0, 1]) {
      const res = await send(node, 'POST', `${ui}/api/session`, {
        from,
        body: { user: 'admin', password: ADMIN_PASSWORD },
      });
      assert.equal(res.status, 429, `node ${node}: ${res.status} ${res.body}`);
    }
  });
});
