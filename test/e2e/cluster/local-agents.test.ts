import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AgentProcess, spawnAgent } from '../../helpers/agent-peer.ts';
import { killServers, type ServeProcess, startServe } from '../../helpers/cli.ts';
import { apiClient, freePort } from '../../helpers/http-client.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { processRuns } from '../../helpers/processes.ts';
import { waitFor } from '../../helpers/wait.ts';

const KEY = 'local-agents-admin-key-0123456789';
const FINAL = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown', 'Skipped'];
const LEASE_S = 3;
const LOCAL = 'GLOBAL.Local';

/**
 * Two `millrace serve` nodes started with their defaults on one PostgreSQL database (docs/architecture.md §16): one
 * agent serves a process server at a time, so the second node starts no local agent beside the first node's, and a
 * second agent for GLOBAL.Local is refused while the first serves it. A changed AgentTimeout reaches the connected
 * agent through the other node; the node running the agent SIGKILLed leaves no job Running and none run twice.
 */
describe('two nodes with their defaults on one PostgreSQL database', {
  skip: pgAdminUrl() ? false : 'no PostgreSQL',
}, () => {
  let db: Awaited<ReturnType<typeof createPgDatabase>>;
  let dir = '';
  const ports: number[] = [];
  const serves: ServeProcess[] = [];
  let standby: AgentProcess | undefined;
  const secretKey = randomBytes(32).toString('base64');
  const api = (i: number) => apiClient(ports[i] as number, KEY);
  const url = (i: number) => `http://127.0.0.1:${ports[i]}/millrace`;
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON the server answers
  const job = async (i: number, id: number): Promise<any> => (await api(i)('GET', `/Job/${id}`)).json;
  const submit = async (i: number, definition: string): Promise<number> => {
    const r = await api(i)('POST', `/Job/${definition}`);
    assert.equal(r.status, 201, r.body);
    return r.json.jobId as number;
  };
  const start = (i: number) =>
    startServe(['--data', join(dir, `n${i}`), '--port', String(ports[i]), '--database', db.url, '--node-id', `n${i}`], {
      MILLRACE_ADMIN_API_KEY: KEY,
      MILLRACE_SECRET_KEY: secretKey,
      MILLRACE_TIMER_LEASE: String(LEASE_S),
    });

  before(async () => {
    db = await createPgDatabase();
    dir = await mkdtemp(join(tmpdir(), 'millrace-local-agents-'));
    for (const i of [0, 1]) {
      mkdirSync(join(dir, `n${i}`));
      ports.push(await freePort());
    }
    serves.push(await start(0));
    await waitFor(
      "n0's local agent serving GLOBAL.Local",
      async () => ((await api(0)('GET', `/ProcessServer/${LOCAL}`)).json?.Status === 'Running' ? true : undefined),
      60_000,
      100,
    );
    serves.push(await start(1));
    const runs = join(dir, 'runs');
    mkdirSync(runs);
    for (const [name, script] of [
      ['Nap', `echo "$MILLRACE_JOB_ID" >> ${runs}/started; sleep 25`],
      ['Hold', `echo "$MILLRACE_JOB_ID" >> ${runs}/started; sleep 60`],
      ['Quick', `echo "$MILLRACE_JOB_ID" >> ${runs}/started`],
    ]) {
      const r = await api(0)('POST', `/JobDefinition/GLOBAL.${name}`, {
        JobDefinitionType: 'BASH',
        DefaultQueue: 'GLOBAL.Default',
        Script: script,
      });
      assert.equal(r.status, 201, r.body);
    }
  });

  after(async () => {
    standby?.child.kill('SIGKILL');
    await killServers();
    // A local agent outlives its SIGKILLed server while its jobs run (or for a second without any): stopped here.
    for (const n of ['n0', 'n1'])
      try {
        const pid = Number.parseInt(readFileSync(join(dir, n, 'agents', LOCAL, 'agent.pid'), 'utf8'), 10);
        if (pid > 0 && processRuns(pid)) process.kill(pid, 'SIGKILL');
      } catch {}
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the second node starts no local agent beside the first one, and says why', async () => {
    await waitFor('n1 to say it starts no local agent', async () =>
      /no local agent: the agent of node n0 serves GLOBAL.Local/.test(serves[1]?.output() ?? '') ? true : undefined,
    );
    assert.equal((await api(1)('GET', `/ProcessServer/${LOCAL}`)).json.Status, 'Running');
  });

  test("why a job waits, asked of the node without the agent: n0's agent counts as connected", async () => {
    // A queue behind GLOBAL.Local whose provider holds back low priorities: the job waits for that alone.
    for (const [path, body] of [
      ['/Queue/GLOBAL.Picky', {}],
      [`/QueueProvider/${LOCAL}.GLOBAL.Picky`, { HoldLevel: 50 }],
    ] as const)
      assert.equal((await api(0)('POST', path, body)).status, 201);
    const r = await api(1)('POST', '/Job/GLOBAL.Quick', { Queue: 'GLOBAL.Picky', Priority: 10 });
    assert.equal(r.status, 201, r.body);
    const id = r.json.jobId as number;
    for (const node of [1, 0]) {
      const why = await api(node)('GET', `/Job/${id}/waiting`);
      assert.equal(why.status, 200, why.body);
      assert.deepEqual(
        why.json.Reasons.map((x: { Code: string; Object: string }) => [x.Code, x.Object]),
        [['HoldLevel', `QueueProvider:${LOCAL}.GLOBAL.Picky`]],
        `asked of n${node}`,
      );
    }
    assert.equal((await api(0)('PUT', `/Job/${id}/cancel`)).status, 200);
  });

  test('AgentTimeout lowered to 6 s through the other node while a `sleep 25` job runs: it ends Completed', async () => {
    const id = await submit(1, 'GLOBAL.Nap');
    await waitFor(
      `Job ${id} Running`,
      async () => ((await job(1, id)).Status === 'Running' ? true : undefined),
      60_000,
    );
    const r = await api(1)('PUT', `/ProcessServer/${LOCAL}`, { AgentTimeout: 6 });
    assert.equal(r.status, 200, r.body);
    const done = await waitFor(
      `Job ${id} final`,
      async () => {
        const j = await job(0, id);
        return FINAL.includes(j.Status) ? j : undefined;
      },
      120_000,
      250,
    );
    assert.equal(done.Status, 'Completed', JSON.stringify(done.JobNotes));
    assert.equal((await api(0)('GET', `/ProcessServer/${LOCAL}`)).json.Status, 'Running');
  });

  test('a second agent for GLOBAL.Local is refused while the first serves it', async () => {
    // Another agent proving GLOBAL.Local's secret, connecting to the other node.
    const agentDir = join(dir, 'standby');
    mkdirSync(agentDir);
    copyFileSync(join(dir, 'n0', 'agents', `${LOCAL}.secret`), join(agentDir, 'secret'));
    standby = spawnAgent({ url: url(1), processServer: LOCAL }, agentDir, { dataDir: join(agentDir, 'data') });
    await waitFor(
      'the standby agent refused',
      async () =>
        /answered 409: process server GLOBAL.Local is served by another agent \(instance [0-9a-f]+ on node n0\)/.test(
          standby?.output() ?? '',
        )
          ? true
          : undefined,
      60_000,
    );
  });

  test('the node running the agent SIGKILLed: every job final within AgentTimeout and the lease, none run twice', async () => {
    // Six at once on GLOBAL.Local, so that the jobs submitted after them wait Queued.
    const sized = await api(1)('PUT', `/ProcessServer/${LOCAL}`, { ExecutionSize: 6 });
    assert.equal(sized.status, 200, sized.body);
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await submit(i % 2, 'GLOBAL.Hold'));
    await waitFor(
      'all six Running on the first node',
      async () =>
        (await Promise.all(ids.map((id) => job(1, id)))).every((j) => j.Status === 'Running') ? true : undefined,
      60_000,
      200,
    );
    const queued = [await submit(1, 'GLOBAL.Quick'), await submit(0, 'GLOBAL.Quick'), await submit(1, 'GLOBAL.Quick')];
    for (const id of queued) assert.equal((await job(1, id)).Status, 'Queued');
    const killedAt = Date.now();
    const first = serves[0] as ServeProcess;
    const gone = new Promise((r) => first.child.once('exit', r));
    first.child.kill('SIGKILL');
    await gone;
    const ended = await waitFor(
      'the six jobs final',
      async () => {
        const all = await Promise.all(ids.map((id) => job(1, id)));
        return all.every((j) => FINAL.includes(j.Status)) ? all : undefined;
      },
      120_000,
      200,
    );
    const took = Date.now() - killedAt;
    for (const j of ended) assert.equal(j.Status, 'Unknown', JSON.stringify(j.JobNotes));
    // Bounded only against a hang of the kind this guards against (jobs Running for ever): AgentTimeout 6 s plus the
    // lease 3 s, with room for a loaded machine.
    assert.ok(took < 60_000, `took ${took} ms`);
    // The standby took GLOBAL.Local over: the jobs that waited run there, once each.
    for (const id of queued) {
      const done = await waitFor(
        `Job ${id} final`,
        async () => {
          const j = await job(1, id);
          return FINAL.includes(j.Status) ? j : undefined;
        },
        120_000,
        250,
      );
      assert.equal(done.Status, 'Completed', JSON.stringify(done.JobNotes));
    }
    const started = readFileSync(join(dir, 'runs', 'started'), 'utf8')
      .trim()
      .split('\n');
    for (const id of [...ids, ...queued])
      assert.equal(started.filter((s) => s === String(id)).length, 1, `Job ${id} started once`);
  });

  test('a node started while no live node serves GLOBAL.Local runs its local agent, with the secret the nodes share', async () => {
    const gone = standby?.exited;
    standby?.child.kill('SIGKILL');
    await gone;
    standby = undefined;
    assert.equal(await serves[1]?.stop(), 0);
    serves[1] = await start(1);
    await waitFor(
      "n1's own local agent serving GLOBAL.Local",
      async () => ((await api(1)('GET', `/ProcessServer/${LOCAL}`)).json?.Status === 'Running' ? true : undefined),
      60_000,
      100,
    );
    assert.doesNotMatch(serves[1]?.output() ?? '', /no local agent/);
    const secret = (n: string) => readFileSync(join(dir, n, 'agents', `${LOCAL}.secret`), 'utf8');
    assert.equal(secret('n1'), secret('n0'), "n1 took the database's secret rather than sealing its own over it");
    const id = await submit(1, 'GLOBAL.Quick');
    const done = await waitFor(
      `Job ${id} final`,
      async () => {
        const j = await job(1, id);
        return FINAL.includes(j.Status) ? j : undefined;
      },
      60_000,
      250,
    );
    assert.equal(done.Status, 'Completed', JSON.stringify(done.JobNotes));
  });
});
