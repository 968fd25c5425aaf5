import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { type Config, DEFAULTS, interfacePaths } from '../../../src/config/config.ts';
import { createServer, type MillraceServer } from '../../../src/main.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { getJob, submitSleep, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 26, 10, 0, 0);

interface HistoryItem {
  FromStatus: string | null;
  ToStatus: string;
  Cause: string;
  Detail: string | null;
}

/**
 * MaxRunTime in virtual time (docs/architecture.md §6b): the engine wakes when a limit falls due, not before, and
 * kills then; beside another node on one PostgreSQL, only one node kills, and the other node kills when the one
 * that started the job is gone. `engine.tick()` is what the wake-up timer does at that moment.
 */
for (const backend of backends()) {
  describe(`MaxRunTime in virtual time (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    before(async () => {
      t = await startTestServer(backend, {}, { clock });
    });
    after(() => t.close());

    test('the engine wakes when the limit falls due and kills the job then, not a moment before', async () => {
      const { jobId } = await submitSleep(t, HOUR, { MaxRunTime: 60 });
      const running = await waitForStatus(t, jobId, 'Running');
      assert.equal(running.MaxRunTime, 60, 'the job shows the limit its submit gave');
      const due = utcMillis(running.RunStart) + 60_000;
      assert.equal(t.server.engine.nextWakeAt, due);
      clock.set(due - 1);
      await t.server.engine.tick();
      assert.equal((await getJob(t, jobId)).Status, 'Running');
      clock.set(due);
      await t.server.engine.tick();
      const killed = await getJob(t, jobId);
      assert.equal(killed.Status, 'Killed');
      assert.equal(utcMillis(killed.RunEnd), due);
      const items = (await t.req('GET', `/Job/${jobId}/history`)).json.items as HistoryItem[];
      assert.deepEqual(items.at(-1), {
        Time: killed.RunEnd,
        FromStatus: 'Running',
        ToStatus: 'Killed',
        User: null,
        Cause: 'maxruntime',
        Detail: `Job:${jobId} ran past its MaxRunTime of 60 s`,
      });
    });
  });
}

describe('MaxRunTime on two nodes of one PostgreSQL', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  const clock = new FakeClock(T0);
  const nodes: MillraceServer[] = [];
  const dirs: string[] = [];
  const KEY = 'max-run-nodes-admin-key-0123456789';
  let db: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  let base = '';

  before(async () => {
    db = await createPgDatabase();
    const env = { MILLRACE_ADMIN_API_KEY: KEY, MILLRACE_SECRET_KEY: randomBytes(32).toString('base64') };
    for (const id of ['n1', 'n2']) {
      const dataDir = await mkdtemp(join(tmpdir(), `millrace-test-maxrun-${id}-`));
      dirs.push(dataDir);
      const config: Config = {
        ...DEFAULTS,
        limits: { ...DEFAULTS.limits, maxEventLoopDelayMs: 60_000 },
        localAgent: false,
        port: 0,
        dataDir,
        databaseUrl: db.url,
        nodeId: id,
      };
      nodes.push(await createServer(config, { logger: pino({ level: 'silent' }), env, clock }));
      base = interfacePaths(config).jsonBase;
    }
  });
  after(async () => {
    for (const n of nodes) await n.close().catch(() => {});
    await db?.drop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  const req = async (node: number, method: 'GET' | 'POST', path: string, body?: unknown) => {
    const r = await (nodes[node] as MillraceServer).app.inject({
      method,
      url: `${base}${path}`,
      headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: r.statusCode, json: r.json(), body: r.body };
  };
  const inConsole = (node: number, id: number) =>
    waitFor(`Job:${id} in Console`, async () => {
      const j = (await req(node, 'GET', `/Job/${id}`)).json;
      return j.Status === 'Console' ? j : undefined;
    });
  const submitApproval = async (node: number): Promise<number> => {
    const r = await req(node, 'POST', '/Job/GLOBAL.Approve', {});
    assert.equal(r.status, 201, r.body);
    return r.json.jobId;
  };
  const limitEntries = async (node: number, id: number) =>
    ((await req(node, 'GET', `/Job/${id}/history`)).json.items as HistoryItem[]).filter(
      (h) => h.Cause === 'maxruntime',
    );

  test('both nodes wake at the limit; one kills, once; the other kills once the first is gone', async () => {
    const def = await req(0, 'POST', '/JobDefinition/GLOBAL.Approve', {
      JobDefinitionType: 'UserMessage',
      DefaultQueue: 'GLOBAL.System',
      MaxRunTime: 60,
      UserMessage: { Text: 'Go on?', Responses: [{ Response: 'Yes' }], Participants: ['admin'] },
    });
    assert.equal(def.status, 201, def.body);
    const first = await submitApproval(0);
    const due = utcMillis((await inConsole(0, first)).RunStart) + 60_000;
    // The node that started it told the other when to wake (a wake hint over the cluster channel).
    // Each node's next wake-up is recomputed after its own passes, so both are waited for rather than read once.
    await waitFor('both nodes to wake at the limit', async () =>
      nodes.every((n) => n.engine.nextWakeAt === due) ? true : undefined,
    );
    clock.set(due);
    await Promise.all(nodes.map((n) => n.engine.tick()));
    assert.equal((await req(1, 'GET', `/Job/${first}`)).json.Status, 'Killed');
    assert.deepEqual(
      (await limitEntries(1, first)).map((h) => [h.FromStatus, h.ToStatus]),
      [['Console', 'Killed']],
    );

    // The node that started the next one stops; the one left kills it at its limit.
    const second = await submitApproval(0);
    const secondDue = utcMillis((await inConsole(0, second)).RunStart) + 60_000;
    await nodes[0]?.close();
    clock.set(secondDue);
    await nodes[1]?.engine.tick();
    assert.equal((await req(1, 'GET', `/Job/${second}`)).json.Status, 'Killed');
    assert.deepEqual(
      (await limitEntries(1, second)).map((h) => h.Detail),
      [`Job:${second} ran past its MaxRunTime of 60 s`],
    );
  });
});
