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
import { type AddressedResponse, loopback, requestFrom } from '../../helpers/from-address.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { ADMIN_PASSWORD, basicAuth } from '../../helpers/server.ts';

/**
 * docs/architecture.md §16: the nodes on one PostgreSQL count failed sign-ins together, so sending guesses to
 * several nodes gains nothing. Two server nodes (two app instances on one database), real sockets from loopback
 * addresses, basic auth of the XML interface; the virtual clock moves past what a node keeps of another's count
 * between attempts, as time would.
 */

const START = Date.UTC(2026, 10, 26, 10, 0, 0);

describe('failed sign-ins on two nodes of one PostgreSQL', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  const clock = new FakeClock(START);
  const nodes: MillraceServer[] = [];
  const origins: string[] = [];
  const dirs: string[] = [];
  let db: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  let xmlBase = '';

  before(async () => {
    db = await createPgDatabase();
    const env = { MILLRACE_ADMIN_PASSWORD: ADMIN_PASSWORD, MILLRACE_SECRET_KEY: randomBytes(32).toString('base64') };
    for (const id of ['n1', 'n2']) {
      const dataDir = await mkdtemp(join(tmpdir(), `millrace-test-lockout-${id}-`));
      dirs.push(dataDir);
      const config: Config = {
        ...DEFAULTS,
        authFailuresPerMinute: 20,
        limits: { ...DEFAULTS.limits, maxEventLoopDelayMs: 60_000 },
        localAgent: false,
        port: 0,
        dataDir,
        databaseUrl: db.url,
        nodeId: id,
      };
      const server = await createServer(config, { logger: pino({ level: 'silent' }), env, clock });
      nodes.push(server);
      await listen(server, config);
      origins.push(`http://127.0.0.1:${(server.app.server.address() as { port: number }).port}`);
      xmlBase = interfacePaths(config).xmlBase;
    }
  });
  after(async () => {
    for (const n of nodes) await n.close().catch(() => {});
    await db?.drop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  const signIn = (node: number, address: string, user: string, password: string) =>
    requestFrom(address, `${origins[node]}${xmlBase}/object/Queue/GLOBAL.Default`, {
      headers: { authorization: basicAuth(user, password) },
    });

  /** `count` wrong passwords for admin, alternating between the nodes and round robin over `addresses`. */
  async function guess(addresses: string[], count: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      clock.advance(SharedFailureCounts.FRESH_MS);
      const res = await signIn(i % 2, addresses[i % addresses.length] as string, 'admin', `guess-${i}`);
      assert.ok(res.status === 401 || res.status === 429, `guess ${i}: ${res.status} ${res.body}`);
      statuses.push(res.status);
    }
    return statuses;
  }

  const assertRefused = (res: AddressedResponse, what: string) =>
    assert.equal(res.status, 429, `${what}: ${res.status} ${res.body}`);

  test('25 guesses from one address split over two nodes: both refuse it after 20', async () => {
    clock.advance(61_000);
    const statuses = await guess([loopback(30)], 25);
    assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(5).fill(429)]);
    for (const node of [0, 1]) {
      assertRefused(await signIn(node, loopback(30), 'admin', ADMIN_PASSWORD), `node ${node + 1}`);
      const elsewhere = await signIn(node, loopback(31), 'admin', ADMIN_PASSWORD);
      assert.equal(elsewhere.status, 200, `another address on node ${node + 1}: ${elsewhere.body}`);
    }
  });

  test('25 guesses for admin from 10 addresses over two nodes: the guessers are refused on both, admin is served', async () => {
    clock.advance(61_000);
    const guessers = Array.from({ length: 10 }, (_, i) => loopback(40 + i));
    const statuses = await guess(guessers, 25);
    assert.equal(statuses.filter((s) => s === 401).length, 20, `${statuses}`);
    clock.advance(SharedFailureCounts.FRESH_MS);
    for (const node of [0, 1]) {
      // 127.0.0.40 guessed on node 1 only, 127.0.0.41 on node 2 only: each is refused on the other node too.
      for (const guesser of [guessers[0], guessers[1]] as string[])
        assertRefused(await signIn(node, guesser, 'admin', ADMIN_PASSWORD), `${guesser} on node ${node + 1}`);
      const admin = await signIn(node, loopback(50 + node), 'admin', ADMIN_PASSWORD);
      assert.equal(admin.status, 200, `a fresh address on node ${node + 1}: ${admin.body}`);
    }
  });
});
