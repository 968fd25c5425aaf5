import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type AgentProcess, spawnAgent } from '../../helpers/agent-peer.ts';
import { killServers, type ServeProcess, startServe } from '../../helpers/cli.ts';
import { apiClient, freePort } from '../../helpers/http-client.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { waitFor } from '../../helpers/wait.ts';

const KEY = 'cluster-test-admin-key-0123456789';
const SECRET = 'cluster-agent-secret-0123456789';
const NODES = ['n1', 'n2'] as const;
type NodeId = (typeof NODES)[number];
const FILES = 90;

/**
 * File events across a node's death (docs/architecture.md §7b, §16): two `millrace serve` nodes on one PostgreSQL
 * database and a watching agent connected to the first; that node is SIGKILLed while files arrive, the agent moves
 * to the other, and still each file is raised once (what the dead node committed but did not acknowledge is sent
 * again and refused by the other).
 */
describe('file events when the node holding the agent dies', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  let db: Awaited<ReturnType<typeof createPgDatabase>>;
  let sql: pg.Client;
  let dir = '';
  let agent: AgentProcess | undefined;
  const ports = {} as Record<NodeId, number>;
  const serves = {} as Partial<Record<NodeId, ServeProcess>>;
  const secretKey = randomBytes(32).toString('base64');
  const api = (n: NodeId) => apiClient(ports[n], KEY);
  const url = (n: NodeId) => `http://127.0.0.1:${ports[n]}/millrace`;
  const agentNode = async (): Promise<string | undefined> =>
    (await sql.query<{ node_id: string }>("select node_id from agent_presence where process_server = 'GLOBAL.W'"))
      .rows[0]?.node_id;

  before(async () => {
    db = await createPgDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    dir = await mkdtemp(join(tmpdir(), 'millrace-watch-cluster-'));
    for (const n of NODES) {
      mkdirSync(join(dir, n));
      ports[n] = await freePort();
      serves[n] = await startServe(
        [
          ...['--data', join(dir, n), '--port', String(ports[n]), '--database', db.url],
          ...['--no-local-agent', '--node-id', n, '--timer-lease', '3'],
        ],
        { MILLRACE_ADMIN_API_KEY: KEY, MILLRACE_SECRET_KEY: secretKey },
      );
    }
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`, { mode: 0o600 });
    mkdirSync(join(dir, 'watched', 'in'), { recursive: true });
    const r = await api('n2')('POST', '/ProcessServer/GLOBAL.W', { AgentSecret: SECRET, AgentTimeout: 30 });
    assert.equal(r.status, 201, r.body);
    agent = spawnAgent({ url: [url('n1'), url('n2')].join(','), processServer: 'GLOBAL.W' }, dir, {
      dataDir: join(dir, 'agent'),
      args: ['--watch-root', join(dir, 'watched')],
    });
    await waitFor('the agent on n1', async () => ((await agentNode()) === 'n1' ? true : undefined), 60_000, 100);
  });

  after(async () => {
    agent?.child.kill('SIGKILL');
    await killServers();
    await sql?.end().catch(() => {});
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test(`${FILES} files, the agent's node SIGKILLed midway: each raised once`, async () => {
    const inbox = join(dir, 'watched', 'in');
    const created = await api('n2')('POST', '/EventDefinition/GLOBAL.Landed', {
      FileEvents: [{ ProcessServer: 'GLOBAL.W', Directory: inbox, PollSeconds: 1, StableSeconds: 1 }],
    });
    assert.equal(created.status, 201, created.body);
    const paths = Array.from({ length: FILES }, (_, i) => join(inbox, `f${i}.dat`));
    const raisedOn = async (n: NodeId, id: string) => (await api(n)('GET', `/Event/${id}`)).status === 200;
    await Promise.all(paths.slice(0, 30).map((p) => writeFile(p, p)));
    // Some raises are committed by n1 before it dies (whether their `raised` reached the agent is the race).
    await waitFor('raises on n1', async () => ((await raisedOn('n1', 'Landed5')) ? true : undefined), 60_000, 20);
    await Promise.all(paths.slice(30, 60).map((p) => writeFile(p, p)));
    const n1 = serves.n1?.child;
    assert.ok(n1);
    const gone = new Promise((resolve) => n1.once('exit', resolve));
    n1.kill('SIGKILL');
    await gone;
    await Promise.all(paths.slice(60).map((p) => writeFile(p, p)));
    await waitFor('the agent on n2', async () => ((await agentNode()) === 'n2' ? true : undefined), 120_000, 200);
    await waitFor(
      `${FILES} raises`,
      async () => ((await raisedOn('n2', `Landed${FILES}`)) ? true : undefined),
      120_000,
      200,
    );
    await sleep(3000); // more looks and resends: nothing more may come
    assert.equal(await raisedOn('n2', `Landed${FILES + 1}`), false, 'no raise beyond one per file');
    const { rows } = await sql.query<{ c: string }>(
      "select count(*) as c from events where definition = 'GLOBAL.Landed'",
    );
    assert.equal(Number(rows[0]?.c), FILES);
    const comments: string[] = [];
    for (let i = 1; i <= FILES; i++) comments.push((await api('n2')('GET', `/Event/Landed${i}`)).json.RaiserComment);
    assert.deepEqual(comments.sort(), [...paths].sort(), 'each path raised once');
  });
});
