import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakeClock } from '../../src/time/clock.ts';
import { parseDate } from '../../src/time/date-format.ts';
import { browserSkip, launchBrowser, screenshot, signIn, startDashboardServer } from '../helpers/browser.ts';
import { postCreated as post, submit, waitForStatus } from '../helpers/jobs.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * What will run when, and why something does not, as an operator sees it in Chromium: the Forecast page's week of
 * a daily recurrence with the Dutch Christmas holidays shaded, a holiday window's calendar, and the reasons of a
 * waiting job on its page and in the job list. The server's virtual clock stands still on Monday 21 December 2026,
 * so the week shown holds Christmas.
 */

const skip = browserSkip();
const MONDAY = Date.UTC(2026, 11, 21, 0, 0); // 01:00 in Amsterdam
/** A description that would run script if the page took it as markup. */
const HOSTILE = '<img src=x onerror="window.__xss = 1">';

describe('forecast, calendar and why a job waits in Chromium', { skip }, () => {
  let t: TestServer;
  let ui: string;
  let browser: Browser;
  let page: Page;
  /** The recurrence's job, waiting for its first start. */
  let scheduled: number;

  before(async () => {
    ({ t, ui } = await startDashboardServer({}, { clock: new FakeClock(MONDAY) }));
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' })).newPage();
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test("the Forecast page shows a daily recurrence's seven starts of the week, Christmas shaded", async () => {
    await post(t, '/TimeWindow/GLOBAL.NL_Holidays', {
      TimeZone: 'Europe/Amsterdam',
      Holidays: 'NL',
      Description: HOSTILE,
    });
    await post(t, '/TimeWindow/GLOBAL.NL_Workdays', {
      TimeZone: 'Europe/Amsterdam',
      Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }],
      DisabledDuring: 'GLOBAL.NL_Holidays',
    });
    await post(t, '/SubmitFrame/GLOBAL.Daily', {
      TimeZone: 'Europe/Amsterdam',
      Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days', StartTime: '06:00' }],
    });
    await post(t, '/JobDefinition/GLOBAL.Report', { JobDefinitionType: 'BASH', Script: 'true' });
    await post(t, '/JobDefinition/GLOBAL.Other', { JobDefinitionType: 'BASH', Script: 'true' });
    const first = await submit(t, 'GLOBAL.Report', { SubmitFrame: 'GLOBAL.Daily' });
    assert.equal(first.Status, 'Scheduled');
    scheduled = first.jobId;
    await submit(t, 'GLOBAL.Other', { SubmitFrame: 'GLOBAL.Daily' });

    // Through the page's own controls: the navigation, a definition filter, the week, the holiday calendar.
    await page.click('#nav a[data-page=forecast]');
    await page.locator('#fc-Calendar option[value="GLOBAL.NL_Holidays"]').waitFor({ state: 'attached' });
    await page.fill('#fc-JobDefinition', 'GLOBAL.Report');
    await page.selectOption('#fc-Range', '7d');
    await page.selectOption('#fc-Calendar', 'GLOBAL.NL_Holidays');
    await page.click('#forecast-filters button[type=submit]');
    await page.waitForURL(/Calendar=GLOBAL\.NL_Holidays/);
    const row = page.locator('#forecast g.row[data-row="GLOBAL.Report"]');
    await row.waitFor({ state: 'attached' });

    const starts = await row
      .locator('rect.start')
      .evaluateAll((ticks) => ticks.map((r) => r.getAttribute('data-start')));
    assert.deepEqual(
      starts.map((text) => parseDate(text ?? '', 'UTC').ms),
      [21, 22, 23, 24, 25, 26, 27].map((d) => Date.UTC(2026, 11, d, 5)),
      'one start a day at 06:00 in Amsterdam (05:00 UTC), Christmas included (the recurrence has no calendar)',
    );
    assert.equal(await page.locator('#forecast g.row').count(), 1, 'the definition filter leaves one row');
    const firstTitle = await row.locator('rect.start title').first().textContent();
    assert.equal(firstTitle, `${starts[0]}: GLOBAL.Report (Recurrence, job ${scheduled}), queue GLOBAL.Default`);

    // The holidays: shaded from Christmas Day, and the tick of the 25th lies inside the shade.
    const shade = page.locator('#forecast rect.holiday[data-from^="2026/12/25 00:00"]');
    await shade.waitFor({ state: 'attached' });
    const shaded = await page
      .locator('#forecast rect.holiday')
      .evaluateAll((rects) => rects.map((r) => r.getAttribute('data-from')));
    for (const from of shaded) assert.match(from ?? '', /^2026\/12\/2[56] 00:00/, 'only Christmas and Boxing Day');
    const box = await shade.boundingBox();
    const christmas = await row.locator('rect.start').nth(4).boundingBox();
    const tick24 = await row.locator('rect.start').nth(3).boundingBox();
    assert.ok(box && christmas && tick24);
    const middle = christmas.x + christmas.width / 2;
    assert.ok(middle > box.x && middle < box.x + box.width, 'the 25th is shaded');
    assert.ok(tick24.x + tick24.width / 2 < box.x, 'the 24th is not');
    await page.locator('#forecast-info').filter({ hasText: '7 planned starts of 1 definition' }).waitFor();
    await screenshot(page, 'forecast');

    // One row per queue: both definitions run in GLOBAL.Default.
    await page.selectOption('#fc-By', 'Queue');
    await page.fill('#fc-JobDefinition', '');
    await page.click('#forecast-filters button[type=submit]');
    const queueRow = page.locator('#forecast g.row[data-row="GLOBAL.Default"]');
    await queueRow.locator('rect.start').nth(13).waitFor({ state: 'attached' });
    assert.equal(await queueRow.locator('rect.start').count(), 14);

    // The next 24 hours: this morning's two starts.
    await page.selectOption('#fc-Range', '24h');
    await page.click('#forecast-filters button[type=submit]');
    await page.locator('#forecast-info').filter({ hasText: '2 planned starts of 1 queue' }).waitFor();
    assert.equal(await queueRow.locator('rect.start').count(), 2);
  });

  test("a time window's page shows its fields and its open days month by month", async () => {
    await page.goto(`${ui}/#/timewindow/GLOBAL.NL_Holidays`);
    await page.locator('#window-info dd[data-field="Holidays"]').filter({ hasText: 'NL' }).waitFor();
    await page.locator('#calendar td.open[data-date="2026-12-25"]').waitFor();
    assert.equal(await page.locator('#window-info dd[data-field="Description"]').textContent(), HOSTILE, 'as text');
    assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0);
    const open = await page
      .locator('#calendar table[data-month="2026-12"] td.open')
      .evaluateAll((cells) => cells.map((c) => c.getAttribute('data-date')));
    assert.deepEqual(open, ['2026-12-25', '2026-12-26'], 'Christmas Day and Boxing Day in December');
    assert.equal(await page.locator('#calendar table.month').count(), 3, 'three months from December');
    await page.locator('#calendar td.open[data-date="2027-01-01"]').waitFor();
    await page.click('#calendar-next');
    await page.locator('#calendar td.open[data-date="2027-04-27"]').waitFor(); // King's Day
    await page.click('#calendar-previous');
    await page.locator('#calendar table[data-month="2026-12"]').waitFor();

    // Working days: a reference links to its window; the holidays close Christmas, not the 24th.
    await page.goto(`${ui}/#/timewindow/GLOBAL.NL_Workdays`);
    await page.locator('#calendar td[data-date="2026-12-24"].open').waitFor();
    assert.equal(await page.locator('#calendar td[data-date="2026-12-25"].open').count(), 0);
    assert.equal(await page.locator('#calendar td[data-date="2026-12-26"].open').count(), 0, 'a Saturday');
    await screenshot(page, 'time-window-calendar');
    await page.click('#window-info dd[data-field="DisabledDuring"] a');
    await page.locator('#window-info dd[data-field="Holidays"]').filter({ hasText: 'NL' }).waitFor();

    // The last working day of each month, counted in those working days: the window's new fields show by themselves.
    await post(t, '/TimeWindow/GLOBAL.MonthEnd', {
      TimeZone: 'Europe/Amsterdam',
      Workdays: 'GLOBAL.NL_Workdays',
      Elements: [{ FromWorkday: -1, UntilWorkday: -1 }],
    });
    await page.goto(`${ui}/#/timewindow/GLOBAL.MonthEnd`);
    await page.locator('#window-info dd[data-field="Workdays"] a', { hasText: 'GLOBAL.NL_Workdays' }).waitFor();
    assert.deepEqual(await page.locator('#window-elements td').allTextContents(), ['-1', '-1']);
    assert.deepEqual(await page.locator('#window-elements th').allTextContents(), ['FromWorkday', 'UntilWorkday']);
    await page.locator('#calendar td.open[data-date="2026-12-31"]').waitFor();
    const monthEnds = await page
      .locator('#calendar td.open')
      .evaluateAll((cells) => cells.map((c) => c.getAttribute('data-date')));
    assert.deepEqual(monthEnds, ['2026-12-31', '2027-01-29', '2027-02-26']);
  });

  test('a waiting job says why on its page; the job list marks one no process server can run', async () => {
    await post(t, '/Queue/GLOBAL.Held', { Held: true });
    await post(t, '/QueueProvider/GLOBAL.Local.GLOBAL.Held');
    await post(t, '/JobDefinition/GLOBAL.Load', { JobDefinitionType: 'BASH', Script: 'true' });
    const held = await submit(t, 'GLOBAL.Load', { Queue: 'GLOBAL.Held' });
    await waitForStatus(t, held.jobId, 'QueueHeld');
    // An approval without a DefaultQueue lands in GLOBAL.Default, which no server running UserMessage serves.
    await post(t, '/JobDefinition/GLOBAL.Approve', {
      JobDefinitionType: 'UserMessage',
      UserMessage: { Text: 'Release?', Participants: ['admin'], Responses: [{ Response: 'Yes', Status: 'Completed' }] },
    });
    const stuck = await submit(t, 'GLOBAL.Approve', {});
    await waitForStatus(t, stuck.jobId, 'Queued');

    await page.goto(`${ui}/#/job/${held.jobId}`);
    const reason = page.locator('#job-waiting-reasons li[data-code="QueueHeld"]');
    await reason.waitFor();
    assert.match((await reason.textContent()) ?? '', /GLOBAL\.Held/);
    assert.equal(await reason.locator('a').getAttribute('href'), '#/infra', 'the queue links to its page');
    await screenshot(page, 'job-waiting');

    await page.goto(`${ui}/#/job/${stuck.jobId}`);
    await page.locator('#job-waiting-reasons li[data-code="NoProcessServer"]').waitFor();

    await page.goto(`${ui}/#/jobs`);
    const stuckRow = page.locator(`#jobs-body tr[data-job="${stuck.jobId}"]`);
    await stuckRow.locator('.badge.stuck', { hasText: 'No process server' }).waitFor();
    const heldRow = page.locator(`#jobs-body tr[data-job="${held.jobId}"]`);
    await heldRow.locator('.status[title]').waitFor();
    assert.match((await heldRow.locator('.status').getAttribute('title')) ?? '', /GLOBAL\.Held/);
    assert.equal(await heldRow.locator('.badge.stuck').count(), 0, 'a held queue is no missing process server');
    if (scheduled !== undefined)
      assert.equal(
        await page.locator(`#jobs-body tr[data-job="${scheduled}"] .badge.stuck`).count(),
        0,
        'a scheduled job is not marked',
      );
  });
  test('a forecast longer than the page draws: five pages walked in order, and it says it is cut short', async () => {
    await post(t, '/SubmitFrame/GLOBAL.EveryMinute', { Elements: [{ Kind: 'Every', Every: 1, Unit: 'Minutes' }] });
    await post(t, '/JobDefinition/GLOBAL.Poll', { JobDefinitionType: 'BASH', Script: 'true' });
    await submit(t, 'GLOBAL.Poll', { SubmitFrame: 'GLOBAL.EveryMinute' });
    await page.goto(`${ui}/#/forecast?Range=7d&JobDefinition=GLOBAL.Poll`);
    const info = page.locator('#forecast-info');
    await info.filter({ hasText: 'Only the first 5000 starts are shown' }).waitFor();
    assert.match((await info.textContent()) ?? '', /^5000 planned starts of 1 definition/);
    const ticks = page.locator('#forecast g.row[data-row="GLOBAL.Poll"] rect.start');
    assert.equal(await ticks.count(), 5000, 'five pages of 1,000, in order, none twice');
    const starts = await ticks.evaluateAll((rects) => rects.map((r) => r.getAttribute('data-start')));
    const ms = starts.map((text) => parseDate(text ?? '', 'UTC').ms);
    assert.ok(
      ms.every((v, i) => i === 0 || v - (ms[i - 1] as number) === 60_000),
      'a minute apart',
    );
  });
});
