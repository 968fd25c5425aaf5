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
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { ADMIN_KEY, ADMIN_PASSWORD } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

/**
 * docs/architecture.md §8c and §16: two server nodes on one PostgreSQL watch the same deadline. Both look at every
 * moment (their ticks run at once), the timer owner raises; when the owner stops, the other takes the timer lease
 * over and looks again, and the run still has exactly one DeadlineMissed, delivered once to the webhook receiver.
 */

const AMS = 'Europe/Amsterdam';
/** Thursday 26 November 2026, 05:00 in Amsterdam. */
const THURSDAY = Date.UTC(2026, 10, 26, 4, 0);
const MIN = 60_000;

describe('a deadline on two nodes of one PostgreSQL', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  const clock = new FakeClock(THURSDAY);
  const nodes: MillraceServer[] = [];
  const dirs: string[] = [];
  let db: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  let hook: WebhookReceiver;
  let base = '';

  /** A JSON request to node `n` through its app. */
  const req = async (n: number, method: string, path: string, body?: unknown) => {
    const res = await (nodes[n] as MillraceServer).app.inject({
      method: method as 'GET',
      url: `${base}${path}`,
      headers: { 'x-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    assert.ok(res.statusCode < 400, `${method} ${path}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  /** Both nodes look at the time at once, as their timers would. */
  const tickBoth = () => Promise.all(nodes.map((n) => n.engine.tick()));
  const missedAlerts = async (n: number, jobId: number) =>
    ((await req(n, 'GET', '/Alert?fields=AlertSource,SourceObject,Message')).items as Array<Record<string, string>>)
      .filter((a) => a.AlertSource === 'Deadline:GLOBAL.Ask_By6' && a.SourceObject === `Job:${jobId}`)
      .map((a) => (a.Message ?? '').split(':')[0]);

  before(async () => {
    hook = await startWebhookReceiver();
    db = await createPgDatabase();
    const env = {
      MILLRACE_ADMIN_PASSWORD: ADMIN_PASSWORD,
      MILLRACE_ADMIN_API_KEY: ADMIN_KEY,
      MILLRACE_SECRET_KEY: randomBytes(32).toString('base64'),
    };
    for (const id of ['n1', 'n2']) {
      const dataDir = await mkdtemp(join(tmpdir(), `millrace-test-deadline-${id}-`));
      dirs.push(dataDir);
      const config: Config = {
        ...DEFAULTS,
        limits: { ...DEFAULTS.limits, maxEventLoopDelayMs: 60_000 },
        localAgent: false,
        port: 0,
        dataDir,
        databaseUrl: db.url,
        nodeId: id,
        webhookAllow: ['127.0.0.1'],
        // A short lease, so the other node takes the timers over soon after the owner stops.
        timerLeaseMs: 2_000,
      };
      nodes.push(await createServer(config, { logger: pino({ level: 'silent' }), env, clock }));
      base = interfacePaths(config).jsonBase;
    }
  });
  after(async () => {
    for (const n of nodes) await n.close().catch(() => {});
    await db?.drop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    await hook.close();
  });

  test('one DeadlineMissed per run, whichever node looks, also after the timer owner stops', async () => {
    await waitFor('the nodes see each other', async () =>
      nodes.every((n) => n.engine.cluster.hasPeers) && nodes.some((n) => n.engine.cluster.isOwner) ? true : undefined,
    );
    const owner = nodes.findIndex((n) => n.engine.cluster.isOwner);
    const other = 1 - owner;
    await req(0, 'POST', '/AlertEscalation/GLOBAL.Oncall', { Recipients: [{ Kind: 'Webhook', Address: hook.url }] });
    await req(0, 'POST', '/JobDefinition/GLOBAL.Ask', {
      JobDefinitionType: 'UserMessage',
      DefaultQueue: 'GLOBAL.System',
      UserMessage: { Text: 'Loaded?', Responses: [{ Response: 'Ok' }], Participants: ['admin'] },
    });
    // The deadline and its run are made on the node that does not run the timers: it tells the owner.
    await req(other, 'POST', '/Deadline/GLOBAL.Ask_By6', {
      JobDefinition: 'GLOBAL.Ask',
      EndBy: '06:00',
      TimeZone: AMS,
      AlertEscalation: 'GLOBAL.Oncall',
    });
    const job = (await req(other, 'POST', '/Job/GLOBAL.Ask', {})).jobId as number;
    const due = THURSDAY + 60 * MIN;
    await waitFor("the owner waits for the run's deadline", async () =>
      (nodes[owner] as MillraceServer).engine.nextWakeAt === due ? true : undefined,
    );

    for (const at of [59, 60, 61, 75]) {
      clock.set(THURSDAY + at * MIN);
      await tickBoth();
    }
    assert.deepEqual(await missedAlerts(other, job), ['DeadlineMissed']);
    await waitFor('the delivery', async () => (hook.deliveries.length > 0 ? true : undefined));

    // The owner stops; the other node takes the lease over and looks again at what is due.
    await (nodes[owner] as MillraceServer).close();
    await waitFor('the other node owns the timers', async () =>
      (nodes[other] as MillraceServer).engine.cluster.isOwner ? true : undefined,
    );
    clock.set(THURSDAY + 90 * MIN);
    await (nodes[other] as MillraceServer).engine.deadlines.check();
    assert.deepEqual(await missedAlerts(other, job), ['DeadlineMissed']);
    assert.equal(
      hook.deliveries.filter((d) => (d.json as { SourceObject?: string }).SourceObject === `Job:${job}`).length,
      1,
    );
  });
});
