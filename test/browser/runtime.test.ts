import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakeClock } from '../../src/time/clock.ts';
import { browserSkip, launchBrowser, screenshot, signIn, startDashboardServer } from '../helpers/browser.ts';
import { postCreated as post, submit, waitForStatus } from '../helpers/jobs.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * Runtime statistics and estimates as an operator sees them in Chromium, on the server's virtual clock: a
 * definition's runtime chart holds one mark per run (drawn by uPlot, served by the server itself), and a running
 * job shows its progress against its estimate in the job list and on its page. The jobs are UserMessage jobs,
 * which run until they are answered, so every duration is set by the test.
 */

const skip = browserSkip();
const T0 = Date.UTC(2026, 10, 26, 5, 0, 0);
const MINUTE = 60_000;

describe('runtime chart and progress in Chromium', { skip }, () => {
  let t: TestServer;
  let ui: string;
  let browser: Browser;
  let page: Page;
  const clock = new FakeClock(T0);
  /** Requests the page made to anywhere but the server. */
  const elsewhere: string[] = [];

  /** Runs a job of GLOBAL.Ask for `minutes` of virtual time, answered `response`. */
  const runFor = async (minutes: number, response: string) => {
    const start = clock.now();
    const job = await submit(t, 'GLOBAL.Ask');
    const waiting = await waitForStatus(t, job.jobId, 'Console');
    clock.set(start + minutes * MINUTE);
    const res = await t.req('PUT', `/UserMessage/${waiting.UserMessage}/reply`, { body: { Response: response } });
    assert.equal(res.status, 200, res.body);
    await waitForStatus(t, job.jobId, response === 'Yes' ? 'Completed' : 'Error');
  };

  before(async () => {
    let origin: string;
    ({ t, ui, origin } = await startDashboardServer({}, { clock }));
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' })).newPage();
    page.on('request', (r) => {
      if (!r.url().startsWith(origin)) elsewhere.push(r.url());
    });
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
    await post(t, '/JobDefinition/GLOBAL.Ask', {
      JobDefinitionType: 'UserMessage',
      DefaultQueue: 'GLOBAL.System',
      UserMessage: {
        Text: 'Done?',
        Responses: [
          { Response: 'Yes', Status: 'Completed', ReturnCode: 0 },
          { Response: 'No', Status: 'Error', ReturnCode: 1 },
        ],
        Participants: ['admin'],
      },
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test("a definition's runtime chart holds one mark per run, coloured by status", async () => {
    const runs: Array<[number, string]> = [
      [2, 'Yes'],
      [4, 'Yes'],
      [1, 'No'],
      [3, 'Yes'],
      [5, 'Yes'],
      [3, 'Yes'],
    ];
    for (const [minutes, response] of runs) await runFor(minutes, response);
    await page.goto(`${ui}/#/definition/GLOBAL.Ask`);
    const chart = page.locator('#runtime-chart[data-points]');
    await chart.waitFor();
    assert.equal(await chart.getAttribute('data-points'), String(runs.length));
    assert.equal((await page.locator('#runtime-chart canvas').count()) > 0, true, 'uPlot drew on its canvas');
    // The legend names the series: one per status, then the P50 and P95 lines.
    const legend = await page.locator('#runtime-chart .u-legend .u-label').allTextContents();
    assert.deepEqual(legend, ['Run', 'Completed', 'Error', 'Killed', 'Unknown', 'P50', 'P95']);
    const statuses = await page.locator('#runtime-runs tbody tr .status').allTextContents();
    assert.deepEqual(
      statuses,
      ['Completed', 'Completed', 'Completed', 'Error', 'Completed', 'Completed'],
      'newest first',
    );
    assert.match(
      (await page.locator('#runtime-summary').textContent()) ?? '',
      /^6 runs \(Completed 5, Error 1, Killed 0, Unknown 0\) · mean 3 min 0 s · P50 3 min 0 s · P95 5 min 0 s/,
    );
    await screenshot(page, 'runtime-chart');
  });

  test('a running job shows its progress against its estimate, in the list and on its page', async () => {
    const start = clock.now();
    const job = await submit(t, 'GLOBAL.Ask');
    await waitForStatus(t, job.jobId, 'Console');
    clock.set(start + 90_000); // half of its P50 (3 minutes)
    await page.goto(`${ui}/#/jobs`);
    const bar = page.locator(`#jobs-body td[data-estimate-of="${job.jobId}"] progress.run-progress`);
    await bar.waitFor();
    const value = await bar.evaluate((b) => (b as HTMLProgressElement).value);
    assert.ok(value >= 50 && value < 60, `progress ${value} %`);
    assert.match(
      (await page.locator(`#jobs-body td[data-estimate-of="${job.jobId}"]`).textContent()) ?? '',
      /ends 11\/26 05:\d\d:00/,
    );
    // A finished job has none.
    const done = page.locator('#jobs-body td[data-estimate-of] progress');
    assert.equal(await done.count(), 1, 'only the running job has a bar');
    await page.goto(`${ui}/#/job/${job.jobId}`);
    await page.locator('#job-estimate progress.run-progress').waitFor();
    await screenshot(page, 'runtime-progress');
    assert.deepEqual(elsewhere, [], 'nothing is loaded from anywhere but the server');
  });
  test("a chain job's page marks the critical path of what is left", async () => {
    await post(t, '/JobDefinition/GLOBAL.Pair', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
    await post(t, '/JobChain/GLOBAL.Pair', {
      Steps: [
        { Name: 'First', Calls: [{ JobDefinition: 'GLOBAL.Ask' }, { JobDefinition: 'GLOBAL.Ask' }] },
        { Name: 'Second', Calls: [{ JobDefinition: 'GLOBAL.Ask' }] },
      ],
    });
    const chain = await submit(t, 'GLOBAL.Pair');
    // chain, step First, its two calls, step Second, its call
    for (const id of [chain.jobId + 2, chain.jobId + 3]) await waitForStatus(t, id, 'Console');
    await page.goto(`${ui}/#/job/${chain.jobId}`);
    const marks = page.locator('#chain .critical');
    await marks.first().waitFor();
    assert.deepEqual(
      await marks.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-critical-of')))),
      [chain.jobId + 2, chain.jobId + 5],
      "each step's call expected to end last",
    );
    await screenshot(page, 'runtime-critical-path');
  });
});
