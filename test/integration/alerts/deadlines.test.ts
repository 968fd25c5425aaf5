import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { assertError, getJob, postCreated as post, submit, waitForStatus } from '../../helpers/jobs.ts';
import { sample, parseMetrics } from '../../helpers/prometheus.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';
import { FakeClock } from '../../../src/time/clock.ts';

/**
 * Deadlines in virtual time, delivered to a webhook receiver the test runs: a chain of three steps (user messages
 * the test answers, so each step lasts exactly as long as the test lets the clock run) whose history says 10
 * minutes, started at 05:00 Amsterdam with EndBy 06:00 and a lead of 30 minutes. The clock moves from one moment
 * the engine wakes at to the next (`nextWakeAt`, then `tick`), as its timers would move it.
 */

const AMS = 'Europe/Amsterdam';
const MIN = 60_000;
const DAY = 86_400_000;
/** Monday 23 November 2026, 05:00 in Amsterdam (CET), and the other mornings of the test. */
const MONDAY = Date.UTC(2026, 10, 23, 4, 0);
const FRIDAY = MONDAY - 3 * DAY;
const TUESDAY = MONDAY + DAY;
const WEDNESDAY = MONDAY + 2 * DAY;
const SATURDAY = MONDAY + 5 * DAY;
const STEPS = ['Extract', 'Transform', 'Report'] as const;
/** What each step takes on a good night: 3 + 4 + 3 = 10 minutes. */
const GOOD = [3, 4, 3];

interface Delivered {
  alertId: number;
  deliveryId: number;
  AlertSource: string;
  Message: string;
  SourceObject: string;
}

for (const backend of backends()) {
  describe(`deadlines under the virtual clock (${backend.name})`, () => {
    let t: TestServer;
    let hook: WebhookReceiver;
    const clock = new FakeClock(FRIDAY - DAY);

    /** Moves the clock to `until` through every moment the engine wakes at before it, as its timers would. */
    const runUntil = async (until: number): Promise<void> => {
      for (let steps = 0; ; steps++) {
        assert.ok(steps < 1000, 'a bounded number of wake-ups');
        const next = t.server.engine.nextWakeAt;
        if (next === undefined || next >= until) break;
        clock.set(Math.max(next, clock.now()));
        await t.server.engine.tick();
      }
      clock.set(until);
      await t.server.engine.tick();
    };

    /**
     * The webhook deliveries of deadline alerts about `jobId`, in order. Delivery is at least once (one cut short by
     * the restart is sent again, engine/alert-worker.ts): a receiver counts each deliveryId once, as here.
     */
    const alertsAbout = (jobId: number): Delivered[] => {
      const seen = new Set<number>();
      return hook.deliveries
        .map((d) => d.json as Delivered)
        .filter((d) => d.AlertSource === 'Deadline:GLOBAL.Nightly_By6' && d.SourceObject === `Job:${jobId}`)
        .filter((d) => !seen.has(d.deliveryId) && seen.add(d.deliveryId) !== undefined);
    };
    /** The kinds of the deadline alerts raised about `jobId` (the Alert inbox, oldest first). */
    const kinds = async (jobId: number): Promise<string[]> => {
      const res = await t.req('GET', '/Alert?fields=AlertSource,SourceObject,Message&Limit=1000');
      return (res.json.items as Delivered[])
        .filter((a) => a.AlertSource === 'Deadline:GLOBAL.Nightly_By6' && a.SourceObject === `Job:${jobId}`)
        .map((a) => a.Message.split(':')[0] as string)
        .reverse();
    };
    /** The webhook deliveries about `jobId` once there are `n` (delivery follows the commit). */
    const delivered = (jobId: number, n: number): Promise<Delivered[]> =>
      waitFor(`${n} deliveries about Job:${jobId}`, async () => {
        const all = alertsAbout(jobId);
        return all.length >= n ? all : undefined;
      });

    /** The call job of step `name` of chain `chainId` once it waits for its answer. */
    const stepJob = (chainId: number, name: string) =>
      waitFor(`step ${name} of Job:${chainId}`, async () => {
        const list = await t.req('GET', `/Job?JobDefinition=GLOBAL.Nightly_${name}&Status=Console`);
        const job = (list.json.items as Array<{ jobId: number; UserMessage: number }>).find((j) => j.jobId > chainId);
        return job;
      });

    /**
     * Runs the chain from `start`: each step is answered `minutes[i]` after the previous one (the clock moving
     * through the engine's wake-ups meanwhile); a step without minutes is left waiting. Answers the chain's jobId.
     */
    const night = async (start: number, minutes: readonly number[]): Promise<number> => {
      await runUntil(start);
      const chain = (await submit(t, 'GLOBAL.Nightly')).jobId;
      let at = start;
      for (const [i, m] of minutes.entries()) {
        const step = await stepJob(chain, STEPS[i] as string);
        at += m * MIN;
        await runUntil(at);
        const res = await t.req('PUT', `/UserMessage/${step.UserMessage}/reply`, { body: { Response: 'Ok' } });
        assert.equal(res.status, 200, res.body);
      }
      if (minutes.length === STEPS.length) await waitForStatus(t, chain, 'Completed');
      return chain;
    };

    before(async () => {
      hook = await startWebhookReceiver();
      t = await startTestServer(backend, { webhookAllow: ['127.0.0.1'] }, { clock });
      await post(t, '/AlertEscalation/GLOBAL.Oncall', { Recipients: [{ Kind: 'Webhook', Address: hook.url }] });
      await post(t, '/TimeWindow/GLOBAL.Weekdays', {
        TimeZone: AMS,
        Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }],
      });
      for (const name of STEPS)
        await post(t, `/JobDefinition/GLOBAL.Nightly_${name}`, {
          JobDefinitionType: 'UserMessage',
          DefaultQueue: 'GLOBAL.System',
          UserMessage: { Text: `${name} done?`, Responses: [{ Response: 'Ok' }], Participants: ['admin'] },
        });
      await post(t, '/JobDefinition/GLOBAL.Nightly', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobChain/GLOBAL.Nightly', {
        Steps: STEPS.map((name) => ({ Name: name, Calls: [{ JobDefinition: `GLOBAL.Nightly_${name}` }] })),
      });
      await post(t, '/Deadline/GLOBAL.Nightly_By6', {
        Description: 'Morning reports',
        JobDefinition: 'GLOBAL.Nightly',
        EndBy: '06:00',
        TimeZone: AMS,
        TimeWindow: 'GLOBAL.Weekdays',
        LeadMinutes: 30,
        AlertEscalation: 'GLOBAL.Oncall',
      });
    });
    after(async () => {
      await t.close();
      await hook.close();
    });

    test('a Deadline is an object like every other: bad fields are 400 naming them, and nothing is stored', async () => {
      const got = (await t.req('GET', '/Deadline/GLOBAL.Nightly_By6')).json;
      assert.equal(got.EndBy, '06:00');
      assert.equal(got.JobDefinition, 'GLOBAL.Nightly');
      assert.equal(got.LeadMinutes, 30);
      const bad = (body: Record<string, unknown>) => t.req('POST', '/Deadline/GLOBAL.Bad', { body });
      assertError(await bad({ JobDefinition: 'GLOBAL.Nightly', EndBy: '6:00' }), 400, /"EndBy"/);
      assertError(await bad({ JobDefinition: 'GLOBAL.Nightly', EndBy: '24:00' }), 400, /"EndBy"/);
      assertError(await bad({ EndBy: '06:00' }), 400, /"JobDefinition"/);
      assertError(await bad({ JobDefinition: 'GLOBAL.Nope', EndBy: '06:00' }), 400, /GLOBAL\.Nope/);
      assertError(
        await bad({ JobDefinition: 'GLOBAL.Nightly', EndBy: '06:00', LeadMinutes: 1441 }),
        400,
        /LeadMinutes/,
      );
      assertError(
        await bad({ JobDefinition: 'GLOBAL.Nightly', EndBy: '06:00', TimeZone: 'Mars/Base' }),
        400,
        /TimeZone/,
      );
      assert.equal((await t.req('GET', '/Deadline/GLOBAL.Bad')).status, 404);
    });

    /** The alert (as GET answers it) a delivery is about. */
    const alertOf = async (d: Delivered) => (await t.req('GET', `/Alert/${d.alertId}`)).json;
    /** A date of the alerts' zone on `day` (YYYY/MM/DD) at `time` (HH:MM:SS,mmm), as the server writes it. */
    const ams = (day: string, time: string) => `${day} ${time} ${AMS}`;

    test('a night whose history says 10 minutes, started at 05:00 with EndBy 06:00 and lead 30, is on time: no alert', async () => {
      // Friday: the first night gives the history (3 + 4 + 3 minutes).
      const first = await night(FRIDAY, GOOD);
      const history = (await t.req('GET', '/JobDefinition/GLOBAL.Nightly/statistics')).json;
      assert.equal(history.Runs, 1);
      assert.equal(history.P95Seconds, 600);
      // Monday: the same night, now judged by its estimate all along.
      const chain = await night(MONDAY, GOOD);
      await runUntil(MONDAY + 90 * MIN);
      assert.deepEqual([await kinds(first), await kinds(chain)], [[], []]);
      const page = (await t.req('GET', '/deadlines')).json;
      assert.deepEqual(
        page.Deadlines.map((d: Record<string, unknown>) => [d.Deadline, d.EndBy, d.State, d.Job, d.Alerts]),
        [['GLOBAL.Nightly_By6', ams('2026/11/23', '06:00:00,000'), 'Met', chain, []]],
      );
    });

    test('a second step that runs long: DeadlineAtRisk before 05:30, DeadlineMissed at 06:00, one of each, across a restart', async () => {
      // Tuesday: Transform is not answered before 06:00. Its P95 is 4 minutes and Report's 3: once Transform runs
      // past 05:07 the chain's estimated end is now + 3 minutes, which passes 05:30 at 05:27.
      const chain = await night(TUESDAY, [3]);
      await runUntil(TUESDAY + 29 * MIN);
      assert.deepEqual(await kinds(chain), ['DeadlineAtRisk'], 'at risk before 05:30');
      const [risk] = (await delivered(chain, 1)) as [Delivered];
      assert.match(
        risk.Message,
        new RegExp(
          `^DeadlineAtRisk: Job:${chain} \\(GLOBAL.Nightly\\) is expected to end 2026/11/24 05:30:\\d\\d,\\d{3} ${AMS}, later than LeadMinutes 30 before EndBy 2026/11/24 06:00:00,000 ${AMS} of deadline GLOBAL.Nightly_By6`,
        ),
      );
      const riskAlert = await alertOf(risk);
      assert.ok(
        riskAlert.CreationTime >= ams('2026/11/24', '05:27:00,000') &&
          riskAlert.CreationTime < ams('2026/11/24', '05:30:00,000'),
        `raised when the estimate passed 05:30: ${riskAlert.CreationTime}`,
      );
      assert.equal(riskAlert.AlertEscalation, 'GLOBAL.Oncall');
      assert.equal(riskAlert.AlertSource, 'Deadline:GLOBAL.Nightly_By6');
      assert.equal(riskAlert.Status, 'NotAcknowledged');
      assert.equal((await t.req('GET', '/deadlines')).json.Deadlines[0].State, 'AtRisk');
      const metrics = parseMetrics((await t.req('GET', '//metrics')).body);
      assert.equal(sample(metrics, 'millrace_deadline_alerts_total', { kind: 'DeadlineAtRisk' }), 1);
      assert.equal(sample(metrics, 'millrace_deadline_alerts_total', { kind: 'DeadlineMissed' }), 0);

      // A restart in the middle of the night looks again from the database: the risk is not raised again.
      await t.restart();
      await runUntil(TUESDAY + 59 * MIN);
      assert.deepEqual(await kinds(chain), ['DeadlineAtRisk']);
      await runUntil(TUESDAY + 60 * MIN);
      const missed = (await delivered(chain, 2))[1] as Delivered;
      assert.match(
        missed.Message,
        new RegExp(
          `^DeadlineMissed: Job:${chain} \\(GLOBAL.Nightly\\) had not ended by EndBy 2026/11/24 06:00:00,000 ${AMS}`,
        ),
      );
      assert.equal((await alertOf(missed)).CreationTime, ams('2026/11/24', '06:00:00,000'));
      const after = parseMetrics((await t.req('GET', '//metrics')).body);
      assert.equal(sample(after, 'millrace_deadline_alerts_total', { kind: 'DeadlineMissed' }), 1);
      const page = (await t.req('GET', '/deadlines')).json;
      assert.deepEqual(
        page.Deadlines.map((d: Record<string, unknown>) => [d.State, d.Job, d.Alerts]),
        [['Missed', chain, ['DeadlineAtRisk', 'DeadlineMissed']]],
      );
      // Finishing late raises nothing more (no DeadlineMet after a miss).
      for (const name of STEPS.slice(1)) {
        const step = await stepJob(chain, name);
        await t.req('PUT', `/UserMessage/${step.UserMessage}/reply`, { body: { Response: 'Ok' } });
      }
      await waitForStatus(t, chain, 'Completed');
      await runUntil(TUESDAY + 120 * MIN);
      assert.deepEqual(await kinds(chain), ['DeadlineAtRisk', 'DeadlineMissed']);
      assert.equal(alertsAbout(chain).length, 2, 'two deliveries: one of each');
    });

    test('a run that recovers after its risk raises DeadlineMet', async () => {
      // Wednesday: Transform runs long until 05:28 (at risk from 05:27), then Report takes a minute: done 05:29.
      const chain = await night(WEDNESDAY, [3, 25, 1]);
      await runUntil(WEDNESDAY + 90 * MIN);
      assert.deepEqual(await kinds(chain), ['DeadlineAtRisk', 'DeadlineMet']);
      const met = (await delivered(chain, 2))[1] as Delivered;
      assert.match(
        met.Message,
        new RegExp(
          `^DeadlineMet: Job:${chain} \\(GLOBAL.Nightly\\) ended 2026/11/25 05:29:00,000 ${AMS}, in time for EndBy`,
        ),
      );
      assert.equal((await t.req('GET', '/deadlines')).json.Deadlines[0].State, 'Met');
    });

    test('a deadline on a day its window excludes raises nothing', async () => {
      const chain = await night(SATURDAY, [3]);
      await runUntil(SATURDAY + 120 * MIN);
      assert.deepEqual(await kinds(chain), []);
      assert.equal((await getJob(t, chain)).Status, 'Waiting', 'the chain still waits for its step');
      const page = (await t.req('GET', '/deadlines')).json;
      assert.equal(page.Deadlines[0].State, 'NotToday');
      // The page shows a deadline to whom may view it and the jobs of its definition's partition.
      const deadlineOnly = await t.keyWithGrants('deadline-viewer', ['Deadline:GLOBAL:View']);
      const both = await t.keyWithGrants('deadline-and-jobs', ['Deadline:GLOBAL:View', 'Job:GLOBAL:View']);
      assert.deepEqual((await t.req('GET', '/deadlines', { key: deadlineOnly })).json.Deadlines, []);
      assert.deepEqual(
        (await t.req('GET', '/deadlines', { key: both })).json.Deadlines.map((d: { Deadline: string }) => d.Deadline),
        ['GLOBAL.Nightly_By6'],
      );
      assert.equal((await t.req('GET', '/deadlines', { key: null })).status, 401);
    });
  });
}
