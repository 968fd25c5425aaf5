import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  browserSkip,
  launchBrowser,
  recordDialogs,
  screenshot,
  signIn,
  startDashboardServer,
} from '../helpers/browser.ts';
import { getJob, postCreated as post, submit, submitSleep, systemQueue, waitForStatus } from '../helpers/jobs.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * The job page in Chromium: "Mark completed" on a failed job asks why and sets it Completed (the comment in its
 * history), and "Edit" on a waiting job changes it through PATCH /Job/<id>, showing the server's 400 in the form.
 */

const skip = browserSkip();

describe('marking and editing a job in the console (Chromium)', { skip }, () => {
  let t: TestServer;
  let ui: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' })).newPage();
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
    // A System definition the server does not know ends Error at once.
    await post(t, '/JobDefinition/GLOBAL.Fails', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
    await systemQueue(t, 'GLOBAL.Tonight');
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('"Mark completed" on a failed job asks why, then the job is Completed and its history says so', async () => {
    const dialogs = recordDialogs(page);
    const failed = await submit(t, 'GLOBAL.Fails');
    await waitForStatus(t, failed.jobId, 'Error');
    await page.goto(`${ui}/#/job/${failed.jobId}`);
    await page.locator('#job-status', { hasText: 'Error' }).waitFor();
    assert.equal(await page.locator('#job-actions button[data-action=edit]').count(), 0, 'no Edit on a finished job');
    await page.click('#job-actions button[data-action=markcompleted]');
    await page.locator('#comment-dialog').waitFor();
    await page.click('#comment-yes');
    assert.match(String(await page.locator('#comment-error').textContent()), /required/);
    assert.equal((await getJob(t, failed.jobId)).Status, 'Error', 'nothing sent without a comment');
    await page.fill('#comment-text', 'Loaded by hand after the outage');
    await page.click('#comment-yes');
    await page.locator('#job-status', { hasText: 'Completed' }).waitFor();
    await page.locator('#job-history tr', { hasText: 'from Error: Loaded by hand after the outage' }).waitFor();
    const row = await page
      .locator('#job-history tr', { hasText: 'from Error' })
      .evaluate((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent));
    assert.deepEqual(row, [
      'Error',
      'Completed',
      'markcompleted by admin',
      'from Error: Loaded by hand after the outage',
    ]);
    assert.equal((await getJob(t, failed.jobId)).Status, 'Completed');
    await screenshot(page, 'job-mark-completed');
    assert.deepEqual(dialogs, []);
  });

  test('"Edit" on a waiting job: a bad value shown from the server, nothing changed; then saved', async () => {
    const dialogs = recordDialogs(page);
    const job = await submitSleep(t, 5, { HoldOnSubmit: true });
    await page.goto(`${ui}/#/job/${job.jobId}`);
    await page.locator('#job-status', { hasText: 'Held' }).waitFor();
    await page.click('#job-actions button[data-action=edit]');
    await page.locator('#job-edit').waitFor();
    assert.equal(await page.inputValue('#edit-queue'), 'GLOBAL.System');
    assert.equal(await page.inputValue('#edit-p-MilliSeconds'), '5');

    await page.fill('#edit-queue', 'GLOBAL.Nowhere');
    await page.click('#edit-save');
    await page.locator('#edit-error', { hasText: 'Queue:GLOBAL.Nowhere does not exist' }).waitFor();
    assert.equal((await getJob(t, job.jobId)).Queue, 'GLOBAL.System', 'the refused edit changed nothing');

    await page.fill('#edit-queue', 'GLOBAL.Tonight');
    await page.fill('#edit-priority', '80');
    await page.fill('#edit-description', 'moved tonight');
    await page.fill('#edit-p-MilliSeconds', '0');
    await page.click('#edit-save');
    await page.locator('#job-edit').waitFor({ state: 'detached' });
    await page.locator('#job-info', { hasText: 'moved tonight' }).waitFor();
    const now = await getJob(t, job.jobId);
    assert.deepEqual(
      [now.Status, now.Queue, now.Priority, now.Description, now.JobParameters[0].InValueNumber],
      ['Held', 'GLOBAL.Tonight', 80, 'moved tonight', 0],
    );
    await page.locator('#job-history tr', { hasText: 'Queue: Queue:GLOBAL.System → Queue:GLOBAL.Tonight' }).waitFor();
    await screenshot(page, 'job-edit');
    assert.deepEqual(dialogs, []);
  });
});
