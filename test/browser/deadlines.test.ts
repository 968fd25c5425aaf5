import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakeClock } from '../../src/time/clock.ts';
import {
  browserSkip,
  launchBrowser,
  recordDialogs,
  screenshot,
  signIn,
  startDashboardServer,
} from '../helpers/browser.ts';
import { postCreated as post, submit, waitForStatus } from '../helpers/jobs.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * The Deadlines page as an operator sees it in Chromium, on a virtual clock standing on Tuesday 24 November 2026:
 * a chain whose step waits for an answer has missed its 06:00 deadline, another deadline's day is outside its window
 * and a third has no run yet. The page lists them in order of EndBy with their state, run and alerts.
 */

const skip = browserSkip();
const AMS = 'Europe/Amsterdam';
/** Tuesday 24 November 2026, 05:00 in Amsterdam. */
const TUESDAY = Date.UTC(2026, 10, 24, 4, 0);
const MIN = 60_000;
/** A description that would run script if the page took it as markup. */
const HOSTILE = '<img src=x onerror="window.__xss = 1">';

describe('the Deadlines page in Chromium', { skip }, () => {
  let t: TestServer;
  let ui: string;
  let browser: Browser;
  let page: Page;
  const clock = new FakeClock(TUESDAY);

  before(async () => {
    ({ t, ui } = await startDashboardServer({}, { clock }));
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'UTC' })).newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test("today's deadlines with their state, run and alerts, in order of EndBy", async () => {
    const dialogs = recordDialogs(page);
    await post(t, '/JobDefinition/GLOBAL.Ask', {
      JobDefinitionType: 'UserMessage',
      DefaultQueue: 'GLOBAL.System',
      UserMessage: { Text: 'Loaded?', Responses: [{ Response: 'Ok' }], Participants: ['admin'] },
    });
    await post(t, '/JobChain/GLOBAL.Nightly', { Steps: [{ Name: 'Load', Calls: [{ JobDefinition: 'GLOBAL.Ask' }] }] });
    await post(t, '/JobChain/GLOBAL.Weekly', { Steps: [] });
    await post(t, '/TimeWindow/GLOBAL.Mondays', {
      TimeZone: AMS,
      Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Monday' }],
    });
    await post(t, '/Deadline/GLOBAL.Reports', {
      JobDefinition: 'GLOBAL.Nightly',
      EndBy: '06:00',
      TimeZone: AMS,
      LeadMinutes: 30,
      Description: HOSTILE,
    });
    await post(t, '/Deadline/GLOBAL.Weekly_By7', {
      JobDefinition: 'GLOBAL.Weekly',
      EndBy: '07:00',
      TimeZone: AMS,
      TimeWindow: 'GLOBAL.Mondays',
    });
    await post(t, '/Deadline/GLOBAL.Noon', { JobDefinition: 'GLOBAL.Weekly', EndBy: '12:00', TimeZone: AMS });
    const chain = (await submit(t, 'GLOBAL.Nightly')).jobId;
    await waitForStatus(t, chain, 'Waiting');
    clock.set(TUESDAY + 61 * MIN);
    await t.server.engine.tick();

    // Signed in once the clock stands where the test leaves it (a session lapses after 30 idle minutes).
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
    await page.click('#nav a[data-page=deadlines]');
    const rows = page.locator('#deadlines tbody tr');
    await page.locator('#deadlines tr[data-deadline="GLOBAL.Reports"][data-state="Missed"]').waitFor();
    const seen = await rows.evaluateAll((trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-deadline'),
        ...[...tr.querySelectorAll('td')].map((td) => td.textContent),
      ]),
    );
    assert.deepEqual(seen, [
      [
        'GLOBAL.Reports',
        HOSTILE,
        'GLOBAL.Nightly',
        '11/24 06:00:00 Europe/Amsterdam',
        'Missed',
        `Job ${chain} Waiting`,
        '—',
        'DeadlineMissed',
      ],
      [
        'GLOBAL.Weekly_By7',
        'GLOBAL.Weekly_By7',
        'GLOBAL.Weekly',
        '11/24 07:00:00 Europe/Amsterdam',
        'Not today',
        '—',
        '—',
        '—',
      ],
      ['GLOBAL.Noon', 'GLOBAL.Noon', 'GLOBAL.Weekly', '11/24 12:00:00 Europe/Amsterdam', 'No run yet', '—', '—', '—'],
    ]);
    assert.match(
      (await page.textContent('#deadlines-info')) ?? '',
      /^3 deadlines today, as of 11\/24 05:01:00 UTC: 0 at risk, 1 missed\.$/,
    );
    await screenshot(page, 'deadlines');
    await page.click(`#deadlines a[href="#/job/${chain}"]`);
    await page.waitForURL(new RegExp(`#/job/${chain}$`));
    assert.equal(await page.evaluate(() => (window as { __xss?: number }).__xss), undefined);
    assert.deepEqual(dialogs, []);
  });
});
