import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { type AgentProcess, spawnAgent } from '../../helpers/agent-peer.ts';
import { killServers, ROOT, type ServeProcess, startServe } from '../../helpers/cli.ts';
import { apiClient, freePort } from '../../helpers/http-client.ts';
import { waitFor } from '../../helpers/wait.ts';

const run = promisify(execFile);
const pgCluster = (command: string, dir: string) =>
  run('bash', [join(ROOT, 'scripts/pg-cluster.sh'), command, dir], { timeout: 90_000 });
const KEY = 'outage-test-admin-key-0123456789';
const SECRET = 'outage-agent-secret-0123456789';
const FINAL = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'];

/**
 * PostgreSQL stopped and started again (its own cluster, not the suite's) under submit load on two
 * server nodes. Meanwhile every answer is 503 with Retry-After (or a refused connection), never another error; once
 * it is back both nodes work without a restart — their channel between them too: a job submitted to one node runs
 * on the agent connected to the other — and every acknowledged submit exists.
 */
describe('two nodes through a PostgreSQL restart', {
  skip: process.env.MILLRACE_TEST_PG_URL ? false : 'no PostgreSQL',
}, () => {
  let clusterDir = '';
  let dir = '';
  let url = '';
  const ports: number[] = [];
  const serves: ServeProcess[] = [];
  let agent: AgentProcess | undefined;
  const api = (i: number) => apiClient(ports[i] as number, KEY);

  before(async () => {
    clusterDir = await mkdtemp(join(tmpdir(), 'mr-pg-nodes-outage-'));
    dir = await mkdtemp(join(tmpdir(), 'millrace-nodes-outage-'));
    url = (await pgCluster('start', clusterDir)).stdout.trim();
    for (const i of [0, 1]) {
      mkdirSync(join(dir, `n${i}`));
      ports.push(await freePort());
      serves.push(
        await startServe(
          [
            '--data',
            join(dir, `n${i}`),
            '--port',
            String(ports[i]),
            '--database',
            url,
            '--no-local-agent',
            '--node-id',
            `n${i}`,
            '--timer-lease',
            '3',
          ],
          { MILLRACE_ADMIN_API_KEY: KEY, MILLRACE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') },
        ),
      );
    }
    for (const [path, body] of [
      ['/ProcessServer/GLOBAL.A1', { DefinitionTypes: ['BASH'], AgentSecret: SECRET, AgentTimeout: 60 }],
      ['/QueueProvider/GLOBAL.A1.GLOBAL.Default', {}],
      [
        '/JobDefinition/GLOBAL.Mark',
        { JobDefinitionType: 'BASH', Script: `echo "$MILLRACE_JOB_ID" >> ${join(dir, 'marker.txt')}` },
      ],
    ] as const) {
      const r = await api(0)('POST', path, body);
      assert.equal(r.status, 201, `${path}: ${r.body}`);
    }
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`, { mode: 0o600 });
    // Connected to the second node only: jobs submitted to the first must reach it through the second.
    agent = spawnAgent({ url: `http://127.0.0.1:${ports[1]}/millrace`, processServer: 'GLOBAL.A1' }, dir);
    await waitFor(
      'the agent Running',
      async () => ((await api(0)('GET', '/ProcessServer/GLOBAL.A1')).json?.Status === 'Running' ? true : undefined),
      60_000,
      100,
    );
  });

  after(async () => {
    agent?.child.kill('SIGKILL');
    await killServers();
    await pgCluster('resume', clusterDir).catch(() => {});
    await pgCluster('stop', clusterDir).catch(() => {});
    await rm(clusterDir, { recursive: true, force: true });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('503 with Retry-After while it is down, no acknowledged submit lost, and both nodes work again', async (t) => {
    const acknowledged: number[] = [];
    const answers = new Map<string, number>();
    let down = false;
    let stop = false;
    let turn = 0;
    const submitter = async () => {
      while (!stop) {
        const i = turn++ % 2;
        try {
          const r = await fetch(
            `http://127.0.0.1:${ports[i]}/millrace/api-extension/External/Vendor/Vendor_RestService/rest/v1/Job/GLOBAL.Mark`,
            { method: 'POST', headers: { 'X-API-Key': KEY }, signal: AbortSignal.timeout(20_000) },
          );
          const body = await r.text();
          if (r.status === 201) acknowledged.push(JSON.parse(body).jobId);
          const kind = `${r.status}${r.status === 503 ? ` Retry-After ${r.headers.get('retry-after')}` : ''}`;
          if (down || r.status !== 201) answers.set(kind, (answers.get(kind) ?? 0) + 1);
          if (r.status !== 201) await new Promise((res) => setTimeout(res, 100));
        } catch (err) {
          answers.set(`no answer: ${(err as Error).name}`, (answers.get(`no answer: ${(err as Error).name}`) ?? 0) + 1);
          await new Promise((res) => setTimeout(res, 100));
        }
      }
    };
    const workers = Array.from({ length: 4 }, submitter);
    try {
      await waitFor('submits acknowledged', async () => (acknowledged.length >= 50 ? true : undefined), 60_000, 20);
      down = true;
      await pgCluster('pause', clusterDir);
      await new Promise((r) => setTimeout(r, 3000));
      await pgCluster('resume', clusterDir);
      const before = acknowledged.length;
      await waitFor(
        'submits acknowledged again',
        async () => (acknowledged.length >= before + 50 ? true : undefined),
        60_000,
        20,
      );
      down = false;
    } finally {
      stop = true;
      await Promise.all(workers);
      t.diagnostic(`answers other than 201, and any during the outage: ${JSON.stringify(Object.fromEntries(answers))}`);
    }
    for (const kind of answers.keys()) assert.match(kind, /^(201|503 Retry-After 5)$/, 'no other answer');
    assert.ok(answers.has('503 Retry-After 5'), 'the outage was seen');

    // Every acknowledged job exists and runs (on the agent of the second node, wherever it was submitted).
    const jobs = await waitFor(
      'every acknowledged job final',
      async () => {
        const all = await Promise.all(acknowledged.map(async (id) => (await api(id % 2)('GET', `/Job/${id}`)).json));
        return all.every((j) => FINAL.includes(j?.Status)) ? all : undefined;
      },
      90_000,
      250,
    );
    assert.deepEqual(
      jobs.map((j) => j.Status),
      acknowledged.map(() => 'Completed'),
    );
    const ran = readFileSync(join(dir, 'marker.txt'), 'utf8').trim().split('\n');
    assert.equal(new Set(ran).size, ran.length, 'none ran twice');

    // Both nodes listen on their channel again (a new connection each, its last statement LISTEN).
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await waitFor(
        'both nodes listening again',
        async () =>
          (await client.query("select 1 from pg_stat_activity where query = 'LISTEN millrace'")).rowCount === 2
            ? true
            : undefined,
        30_000,
        100,
      );
    } finally {
      await client.end();
    }
    // And a job submitted to the first node starts on the second node's agent.
    const r = await api(0)('POST', '/Job/GLOBAL.Mark');
    assert.equal(r.status, 201, r.body);
    const done = await waitFor(
      'the new job Completed',
      async () => {
        const j = (await api(0)('GET', `/Job/${r.json.jobId}`)).json;
        return j.Status === 'Completed' ? j : undefined;
      },
      30_000,
      50,
    );
    assert.equal(done.ProcessServer, 'GLOBAL.A1');
  });
});
