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
/** Monday 23 November 2026, 05:00 in Amsterdam (CET). */
const MONDAY = Date.UTC(2026, 10, 23, 4, 0);
const STEPS = ['Extract', 'Transform', 'Report'] as const;

interface Delivered {
  alertId: number;
  AlertSource: string;
  Message: string;
  SourceObject: string;
}

for (const backend of backends()) {
  describe(`deadlines under the virtual clock (${backend.name})`, () => {
    let t: TestServer;
    let hook: WebhookReceiver;
    const clock = new FakeClock(MONDAY - DAY);

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

    /** The webhook deliveries of deadline alerts about `jobId`, in order. */
    const alertsAbout = (jobId: number): Delivered[] =>
      hook.deliveries
        .map((d) => d.json as Delivered)
        .filter((d) => d.AlertSource === 'Deadline:GLOBAL.Nightly_By6' && d.SourceObject === `Job:${jobId}`);
    const kinds = (jobId: number) => alertsAbout(jobId).map((d) => d.Message.split(':')[0]);

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

    test('a run past EndBy raises DeadlineMissed once, at 06:00, delivered to the webhook', async () => {
      // Monday: the step Transform never gets its answer before 06:00.
      const chain = await night(MONDAY, [3]);
      await runUntil(MONDAY + 59 * MIN);
      assert.deepEqual(kinds(chain), [], 'nothing before EndBy without an estimate');
      await runUntil(MONDAY + 60 * MIN);
      const missed = await waitFor('DeadlineMissed delivered', async () => alertsAbout(chain)[0]);
      assert.match(
        missed.Message,
        new RegExp(
          `^DeadlineMissed: Job:${chain} \\(GLOBAL.Nightly\\) had not ended by EndBy 2026/11/23 06:00:00,000 ${AMS}`,
        ),
      );
      const alert = (await t.req('GET', `/Alert/${missed.alertId}`)).json;
      assert.equal(alert.AlertEscalation, 'GLOBAL.Oncall');
      assert.equal(alert.Status, 'NotAcknowledged');
      assert.equal(alert.AlertSource, 'Deadline:GLOBAL.Nightly_By6');
      const metrics = parseMetrics((await t.req('GET', '//metrics')).body);
      assert.equal(sample(metrics, 'millrace_deadline_alerts_total', { kind: 'DeadlineMissed' }), 1);
      assert.equal(sample(metrics, 'millrace_deadline_alerts_total', { kind: 'DeadlineAtRisk' }), 0);
      const page = (await t.req('GET', '/deadlines')).json;
      assert.deepEqual(
        page.Deadlines.map((d: Record<string, unknown>) => [d.Deadline, d.EndBy, d.State, d.Job, d.Alerts]),
        [['GLOBAL.Nightly_By6', `2026/11/23 06:00:00,000 ${AMS}`, 'Missed', chain, ['DeadlineMissed']]],
      );
      // A restart in the middle of the night looks again from the database: still one alert.
      await t.restart();
      await runUntil(MONDAY + 80 * MIN);
      // Finishing late raises nothing more (no DeadlineMet after a miss).
      for (const name of STEPS.slice(1)) {
        const step = await stepJob(chain, name);
        await t.req('PUT', `/UserMessage/${step.UserMessage}/reply`, { body: { Response: 'Ok' } });
      }
      await waitForStatus(t, chain, 'Completed');
      await runUntil(MONDAY + 120 * MIN);
      assert.deepEqual(kinds(chain), ['DeadlineMissed']);
      assert.equal(
        (await t.req('GET', `/Alert?fields=AlertSource`)).json.items.filter(
          (a: { AlertSource: string }) => a.AlertSource === 'Deadline:GLOBAL.Nightly_By6',
        ).length,
        1,
        'one alert in the inbox',
      );
    });

    test('a deadline on a day its window excludes raises nothing', async () => {
      const saturday = MONDAY + 5 * DAY;
      const chain = await night(saturday, [3]);
      await runUntil(saturday + 120 * MIN);
      assert.deepEqual(kinds(chain), []);
      assert.equal((await getJob(t, chain)).Status, 'Waiting', 'the chain still waits for its step');
      const page = (await t.req('GET', '/deadlines')).json;
      assert.equal(page.Deadlines[0].State, 'NotToday');
    });
  });
}
