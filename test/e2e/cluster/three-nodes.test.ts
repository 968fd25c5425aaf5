import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type AgentProcess, spawnAgent } from '../../helpers/agent-peer.ts';
import { openSse } from '../../helpers/sse.ts';
import { killServers, type ServeProcess, startServe } from '../../helpers/cli.ts';
import { apiClient, freePort } from '../../helpers/http-client.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { mostAtOnce } from '../../helpers/processes.ts';
import { waitFor } from '../../helpers/wait.ts';

const KEY = 'cluster-test-admin-key-0123456789';
const SECRET = 'cluster-agent-secret-0123456789';
const FINAL = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown', 'Skipped'];
const NODES = ['n1', 'n2', 'n3'] as const;
type NodeId = (typeof NODES)[number];
const LEASE_S = 3;

/**
 * Three `millrace serve` nodes and two agents on one throwaway PostgreSQL database (docs/architecture.md §16), all
 * real processes on loopback. Nodes are killed with SIGKILL and started again while clients submit to all of them;
 * the database says which node holds the timer lease and where each agent is connected.
 */
describe('three server nodes on one PostgreSQL database', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  let db: Awaited<ReturnType<typeof createPgDatabase>>;
  let sql: pg.Client;
  let dir = '';
  const ports = {} as Record<NodeId, number>;
  const serves = {} as Partial<Record<NodeId, ServeProcess>>;
  const agents: AgentProcess[] = [];
  const secretKey = randomBytes(32).toString('base64');
  const api = (n: NodeId) => apiClient(ports[n], KEY);
  const url = (n: NodeId) => `http://127.0.0.1:${ports[n]}/millrace`;

  const start = async (n: NodeId) => {
    // A node comes back on its own port (the agents and clients know it by that). While it was down, another socket
    // of the machine may have been given that port as its ephemeral one: wait for it to be let go rather than fail.
    for (let tries = 1; ; tries++) {
      try {
        await startOnce(n);
        return;
      } catch (err) {
        if (tries >= 30 || !String(err).includes('EADDRINUSE')) throw err;
        await sleep(1000);
      }
    }
  };
  const startOnce = async (n: NodeId) => {
    serves[n] = await startServe(
      [
        '--data',
        join(dir, n),
        '--port',
        String(ports[n]),
        '--database',
        db.url,
        '--no-local-agent',
        '--node-id',
        n,
        '--timer-lease',
        String(LEASE_S),
      ],
      { MILLRACE_ADMIN_API_KEY: KEY, MILLRACE_SECRET_KEY: secretKey },
    );
  };
  const kill = async (n: NodeId) => {
    const child = serves[n]?.child;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
    delete serves[n];
  };
  const owner = async (): Promise<string | undefined> => {
    const r = await sql.query<{ holder: string; expires_at: string }>(
      "select holder, expires_at from cluster_leases where name = 'timers'",
    );
    const row = r.rows[0];
    return row && Number(row.expires_at) > Date.now() ? row.holder : undefined;
  };
  const agentNode = async (ps: string): Promise<string | undefined> =>
    (await sql.query<{ node_id: string }>('select node_id from agent_presence where process_server = $1', [ps])).rows[0]
      ?.node_id;
  /** Waits until Job `id`, read from node `n`, is as `ok` wants (bounded only to catch a hang). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON the server answers
  const jobWhen = (n: NodeId, id: number, what: string, ok: (job: any) => boolean) =>
    waitFor(
      `Job ${id} ${what}`,
      async () => {
        const j = (await api(n)('GET', `/Job/${id}`)).json;
        return ok(j) ? j : undefined;
      },
      120_000,
      50,
    );
  const alive = (): NodeId[] => NODES.filter((n) => serves[n] !== undefined);
  const post = async (path: string, body: unknown) => {
    const r = await api(alive()[0] as NodeId)('POST', path, body);
    assert.equal(r.status, 201, `${path}: ${r.body}`);
  };

  before(async () => {
    db = await createPgDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    dir = await mkdtemp(join(tmpdir(), 'millrace-cluster-'));
    for (const n of NODES) {
      mkdirSync(join(dir, n));
      ports[n] = await freePort();
    }
    // One at a time: the first creates the schema and the administrator.
    for (const n of NODES) await start(n);
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`, { mode: 0o600 });
    for (const ps of ['A1', 'A2']) {
      await post(`/ProcessServer/GLOBAL.${ps}`, { DefinitionTypes: ['BASH'], AgentSecret: SECRET, AgentTimeout: 30 });
      await post(`/QueueProvider/GLOBAL.${ps}.GLOBAL.Default`, {});
    }
    // Agent 1 prefers n1, agent 2 prefers n2: the nodes hold one agent each.
    agents.push(
      spawnAgent({ url: [url('n1'), url('n2'), url('n3')].join(','), processServer: 'GLOBAL.A1' }, dir, {
        dataDir: join(dir, 'agent1'),
      }),
      spawnAgent({ url: [url('n2'), url('n3'), url('n1')].join(','), processServer: 'GLOBAL.A2' }, dir, {
        dataDir: join(dir, 'agent2'),
      }),
    );
    await waitFor(
      'both agents connected, to n1 and n2',
      async () =>
        (await agentNode('GLOBAL.A1')) === 'n1' && (await agentNode('GLOBAL.A2')) === 'n2' ? true : undefined,
      60_000,
      100,
    );
    await waitFor(
      'both process servers Running as every node says',
      async () => {
        for (const n of NODES)
          for (const ps of ['A1', 'A2'])
            if ((await api(n)('GET', `/ProcessServer/GLOBAL.${ps}`)).json?.Status !== 'Running') return undefined;
        return true;
      },
      30_000,
      100,
    );
  });

  after(async () => {
    for (const a of agents) a.child.kill('SIGKILL');
    await killServers();
    await sql?.end().catch(() => {});
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('a queue limit of 3 holds while two nodes dispatch to their own agents', async () => {
    const log = join(dir, 'intervals.txt');
    await post('/Queue/GLOBAL.Three', { ExecutionSize: 3 });
    // Each provider takes 2 at most, so that reaching the queue's 3 needs both agents, whichever node wins the race
    // to dispatch a job that another node's commit queued.
    for (const ps of ['A1', 'A2']) await post(`/QueueProvider/GLOBAL.${ps}.GLOBAL.Three`, { ExecutionSize: 2 });
    await post('/JobDefinition/GLOBAL.Interval', {
      JobDefinitionType: 'BASH',
      DefaultQueue: 'GLOBAL.Three',
      // The first jobs wait until three have started, so the limit is reached however slowly processes start.
      Script: `echo "start $(date +%s%N)" >> ${log}; while [ "$(grep -c start ${log})" -lt 3 ]; do sleep 0.05; done; sleep 0.4; echo "end $(date +%s%N)" >> ${log}`,
    });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await api(NODES[i % 3] as NodeId)('POST', '/Job/GLOBAL.Interval');
      assert.equal(r.status, 201, r.body);
      ids.push(r.json.jobId);
    }
    const jobs = await waitFor(
      'all 12 final',
      async () => {
        const all = await Promise.all(ids.map(async (id) => (await api('n3')('GET', `/Job/${id}`)).json));
        return all.every((j) => FINAL.includes(j.Status)) ? all : undefined;
      },
      60_000,
      200,
    );
    assert.deepEqual(
      jobs.map((j) => j.Status),
      ids.map(() => 'Completed'),
    );
    assert.deepEqual(new Set(jobs.map((j) => j.ProcessServer)), new Set(['GLOBAL.A1', 'GLOBAL.A2']), 'both ran some');
    const { most, lines } = mostAtOnce(log);
    assert.equal(lines, 24);
    assert.equal(most, 3, 'the limit is used and never exceeded, across nodes');
  });

  test('the live feed of every node shows the job events of a commit made on another', async () => {
    const feeds = await Promise.all(
      NODES.map((n) =>
        openSse(`${url(n)}/api-extension/External/Vendor/Vendor_RestService/rest/v1/stream`, { 'X-API-Key': KEY }),
      ),
    );
    try {
      for (const f of feeds) assert.equal(f.status, 200);
      const r = await api('n1')('POST', '/Job/GLOBAL.System_Sleep', {
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
      });
      assert.equal(r.status, 201, r.body);
      const id = r.json.jobId as number;
      for (const [i, f] of feeds.entries())
        await f.until(`n${i + 1} shows Job ${id} Completed`, (events) =>
          events.find((e) => e.event === 'job' && e.data.jobId === id && e.data.to === 'Completed'),
        );
    } finally {
      for (const f of feeds) f.close();
    }
  });

  test('every node shows every event of a commit too large for one notification', async () => {
    // One bulk hold of 60 Scheduled jobs is one commit of 60 events, more than one NOTIFY payload holds.
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) {
      const r = await api('n1')('POST', '/Job/GLOBAL.System_Sleep', {
        RequestedStartTime: '2099/01/01 06:00:00,000 UTC',
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
      });
      assert.equal(r.status, 201, r.body);
      ids.push(r.json.jobId as number);
    }
    const feeds = await Promise.all(
      NODES.map((n) =>
        openSse(`${url(n)}/api-extension/External/Vendor/Vendor_RestService/rest/v1/stream`, { 'X-API-Key': KEY }),
      ),
    );
    try {
      for (const f of feeds) assert.equal(f.status, 200);
      const r = await api('n1')('POST', '/Job/bulk/hold', { JobIds: ids });
      assert.equal(r.status, 200, r.body);
      assert.equal(r.json.Done, 60, r.body);
      for (const [i, f] of feeds.entries()) {
        const held = await f.until(`n${i + 1} shows all 60 jobs Held`, (events) => {
          const seen = events.filter((e) => e.event === 'job' && e.data.to === 'Held').map((e) => e.data.jobId);
          return seen.length >= 60 ? seen : undefined;
        });
        assert.deepEqual(
          [...held].sort((a, b) => Number(a) - Number(b)),
          ids,
          `n${i + 1}`,
        );
      }
    } finally {
      for (const f of feeds) f.close();
    }
  });

  test('a kill sent to a node that does not hold the agent reaches it through the node that does', async () => {
    await post('/JobDefinition/GLOBAL.Long', { JobDefinitionType: 'BASH', Script: 'sleep 60' });
    const id = (await api('n1')('POST', '/Job/GLOBAL.Long')).json.jobId as number;
    const running = await jobWhen('n1', id, 'Running', (j) => j.Status === 'Running');
    const holder = await agentNode(running.ProcessServer);
    const other = NODES.find((n) => n !== holder) as NodeId;
    const r = await api(other)('PUT', `/Job/${id}/kill`);
    assert.equal(r.status, 200, r.body);
    const job = await jobWhen(other, id, 'final', (j) => FINAL.includes(j.Status));
    assert.equal(job.Status, 'Killed');
  });

  test('an agent whose node is killed reconnects to another and its running job ends with its real return code', async (t) => {
    // It runs until the test lets it go (the file `go`): Running is a state to see, not a moment to catch, and it
    // ends only once its agent has moved to another node.
    const go = join(dir, 'seven-go');
    await post('/JobDefinition/GLOBAL.Seven', {
      JobDefinitionType: 'BASH',
      Script: `while [ ! -e ${go} ]; do sleep 0.1; done; exit 7`,
      ReturncodeMapToCompleted: '7',
    });
    const r = await api('n2')('POST', '/Job/GLOBAL.Seven');
    assert.equal(r.status, 201, r.body);
    const id = r.json.jobId as number;
    const running = await jobWhen('n2', id, 'Running', (j) => j.Status === 'Running');
    const ps = running.ProcessServer as string;
    const held = (await agentNode(ps)) as NodeId;
    const killedAt = Date.now();
    await kill(held);
    const moved = await waitFor(
      'the agent on another node',
      async () => {
        const n = await agentNode(ps);
        return n && n !== held ? n : undefined;
      },
      120_000,
      25,
    );
    const reconnectMs = Date.now() - killedAt;
    writeFileSync(go, '');
    const job = await jobWhen(moved as NodeId, id, 'final', (j) => FINAL.includes(j.Status));
    assert.equal(job.Status, 'Completed', JSON.stringify(job));
    assert.equal(job.ReturnCode, 7);
    t.diagnostic(`agent reconnected to ${moved} ${reconnectMs} ms after ${held} was killed`);
    await start(held);
  });

  test('nodes killed under load: no acknowledged submit lost, no BASH job run twice, the recurrence neither doubled nor skipped', async (t) => {
    const marker = join(dir, 'marker.txt');
    await post('/JobDefinition/GLOBAL.Mark', {
      JobDefinitionType: 'BASH',
      Script: `echo "$MILLRACE_JOB_ID" >> ${marker}`,
    });
    await post('/SubmitFrame/GLOBAL.EveryTwo', { CronExpression: '*/2 * * * * *', TimeZone: 'UTC' });
    const first = await api('n1')('POST', '/Job/GLOBAL.System_Sleep', {
      SubmitFrame: 'GLOBAL.EveryTwo',
      JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
    });
    assert.equal(first.status, 201, first.body);
    const group = first.json.jobId as number;

    const acknowledged: Array<{ id: number; bash: boolean }> = [];
    let stop = false;
    let turn = 0;
    const submitter = async () => {
      while (!stop) {
        const nodes = alive();
        const n = nodes[turn++ % nodes.length] as NodeId;
        const bash = turn % 2 === 0;
        try {
          const r = bash
            ? await api(n)('POST', '/Job/GLOBAL.Mark')
            : await api(n)('POST', '/Job/GLOBAL.System_Sleep', {
                JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
              });
          if (r.status === 201) acknowledged.push({ id: r.json.jobId, bash });
        } catch {
          // A node killed under the request: the client moves on to the next.
        }
      }
    };
    const began = Date.now();
    const workers = Array.from({ length: 6 }, submitter);
    const takeovers: number[] = [];
    // Killed nodes start again beside the next round: a start takes seconds on a loaded machine.
    const restarts: Array<Promise<void>> = [];
    try {
      for (let round = 0; round < 2; round++) {
        await waitFor(
          'submits acknowledged',
          async () => (acknowledged.length >= 150 * (round + 1) ? true : undefined),
          120_000,
          20,
        );
        const was = (await waitFor('a timer owner', owner, 60_000, 50)) as NodeId;
        const killedAt = Date.now();
        await kill(was);
        await waitFor(
          'another node owns the timers',
          async () => {
            const now = await owner();
            return now && now !== was ? now : undefined;
          },
          LEASE_S * 1000 + 20_000,
          25,
        );
        takeovers.push(Date.now() - killedAt);
        restarts.push(start(was));
      }
    } finally {
      stop = true;
      await Promise.all(workers);
      await Promise.all(restarts);
    }
    t.diagnostic(`${acknowledged.length} submits acknowledged in ${Date.now() - began} ms`);
    t.diagnostic(`timer takeovers after SIGKILL: ${takeovers.join(', ')} ms (lease ${LEASE_S} s)`);

    const statuses = await waitFor(
      'every acknowledged job final',
      async () => {
        const r = await sql.query<{ job_id: string; status: string }>(
          'select job_id, status from jobs where job_id = any($1::bigint[])',
          [acknowledged.map((a) => a.id)],
        );
        return r.rows.every((x) => FINAL.includes(x.status)) ? r.rows : undefined;
      },
      120_000,
      250,
    );
    t.diagnostic(`all final ${Date.now() - began} ms after the first submit`);
    assert.equal(statuses.length, acknowledged.length, 'every acknowledged submit exists');
    const bashIds = acknowledged.filter((a) => a.bash).map((a) => a.id);
    const ran = readFileSync(marker, 'utf8').trim().split('\n');
    const counts = new Map<string, number>();
    for (const line of ran) counts.set(line, (counts.get(line) ?? 0) + 1);
    const twice = [...counts].filter(([, c]) => c > 1);
    assert.deepEqual(twice, [], 'no BASH job ran twice');
    const bashCompleted = statuses.filter((s) => bashIds.includes(Number(s.job_id)) && s.status === 'Completed');
    for (const s of bashCompleted) assert.ok(counts.has(s.job_id), `Job ${s.job_id} Completed without running`);
    assert.ok(bashCompleted.length > 0);

    // The recurrence: one job per 2 s step from its first start, none twice, none missing. On a quiet machine the load
    // above takes about as long as four steps: wait for a fifth (the kills lie well inside the series then).
    const occurrences = await waitFor(
      'five occurrences of the recurrence',
      async () => {
        const r = await sql.query<{ requested_start: string }>(
          'select requested_start from jobs where job_group = $1 order by requested_start',
          [group],
        );
        return r.rows.length >= 5 ? r : undefined;
      },
      60_000,
      250,
    );
    const starts = occurrences.rows.map((r) => Number(r.requested_start));
    assert.equal(new Set(starts).size, starts.length, 'no occurrence twice');
    for (let i = 1; i < starts.length; i++)
      assert.equal((starts[i] as number) - (starts[i - 1] as number), 2000, `no occurrence skipped: ${starts}`);
  });

  test('a rolling restart (SIGTERM, one node at a time): a client that retries on connection errors sees every submit succeed', async (t) => {
    const failed: string[] = [];
    const ok: number[] = [];
    let stop = false;
    let turn = 0;
    const submitter = async () => {
      while (!stop) {
        const first = turn++;
        for (let tries = 0; tries < 6; tries++) {
          const n = NODES[(first + tries) % 3] as NodeId;
          try {
            const r = await api(n)('POST', '/Job/GLOBAL.System_Sleep', {
              JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
            });
            if (r.status === 201) ok.push(r.json.jobId);
            else failed.push(`${n}: ${r.status} ${r.body.slice(0, 200)}`);
            break;
          } catch {
            // Connection refused or reset: the next node.
          }
        }
      }
    };
    const workers = Array.from({ length: 4 }, submitter);
    try {
      for (const n of NODES) {
        const before = ok.length;
        await waitFor('submits go on', async () => (ok.length >= before + 30 ? true : undefined), 60_000, 20);
        const stopped = await serves[n]?.stop();
        assert.equal(stopped, 0, `${n} stopped cleanly`);
        delete serves[n];
        await start(n);
      }
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    t.diagnostic(`${ok.length} submits through the rolling restart`);
    assert.deepEqual(failed, [], 'no submit failed');
    const r = await sql.query<{ n: string }>('select count(*) as n from jobs where job_id = any($1::bigint[])', [ok]);
    assert.equal(Number(r.rows[0]?.n), ok.length, 'every acknowledged submit exists');
  });
});
