import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser, screenshot, signIn, startDashboardServer } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';
import { waitForJob } from '../helpers/wait.ts';

/**
 * The job list's bulk actions in a real Chromium against a real listening server: three failed jobs selected and
 * restarted (the count a dry run gave, confirmed first); a confirmation that closes when the page changes, on the
 * list and on a job's page when the job's status changes under it, doing nothing.
 */

const skip = browserSkip();

type HistoryEntry = { User: string; Cause: string; Detail: string };

describe('bulk actions in the dashboard', { skip }, () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let ui: string;
  const get = (path: string) => t.req('GET', path);
  const confirm = () => page.locator('#confirm');

  /** Jobs of a System definition no runner takes: each ends in Error. */
  async function failedJobs(description: string, n: number): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await t.req('POST', '/Job/FailNow', { body: { Description: description } });
      assert.equal(res.status, 201, res.body);
      ids.push(res.json.jobId);
    }
    for (const id of ids) assert.equal((await waitForJob(get, id)).Status, 'Error');
    return ids;
  }

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    const def = await t.req('POST', '/JobDefinition/FailNow', {
      body: { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' },
    });
    assert.equal(def.status, 201, def.body);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('select three failed jobs and restart them: counted by a dry run, confirmed first', async () => {
    const ids = await failedJobs('month end', 4);
    const chosen = ids.slice(0, 3);
    await page.goto(`${ui}/#/jobs?Search=month%20end`);
    for (const id of ids) await page.locator(`#jobs-body tr[data-job="${id}"]`).waitFor();
    for (const id of chosen) await page.check(`#jobs-body input.pick[data-job="${id}"]`);
    await page.locator('#bulk-count').filter({ hasText: '3 selected' }).waitFor();
    await page.selectOption('#bulk-action', 'restart');
    await page.fill('#bulk-comment', 'database back');
    await page.click('#bulk-apply');
    await confirm().filter({ hasText: 'Restart 3 of 3 selected jobs?' }).waitFor();
    await screenshot(page, 'bulk-restart-confirm');
    await page.click('#confirm-yes');
    await page.locator('.notice').filter({ hasText: 'Restart: 3 done, 0 skipped.' }).waitFor();
    await page.locator('#bulk-count').filter({ hasText: '0 selected' }).waitFor();

    // Each chosen job has one new job, whose history names the user and the bulk; the fourth none.
    const all = (await get('/Job?JobDefinition=FailNow&Limit=100&fields=jobId')).json.items as { jobId: number }[];
    const origins: number[] = [];
    for (const { jobId } of all.filter((j) => !ids.includes(j.jobId))) {
      const first = ((await get(`/Job/${jobId}/history`)).json.items as HistoryEntry[])[0] as HistoryEntry;
      assert.equal(first.User, 'admin');
      assert.equal(first.Cause, 'bulk');
      origins.push(Number(/^Restart of Job:(\d+)$/.exec(first.Detail)?.[1]));
    }
    assert.deepEqual(
      origins.sort((a, b) => a - b),
      chosen,
    );
  });

  test('the confirmation closes when the page changes, and nothing is done', async () => {
    const [id] = await failedJobs('left alone', 1);
    await page.goto(`${ui}/#/jobs?Search=left%20alone`);
    await page.check(`#jobs-body input.pick[data-job="${id}"]`);
    await page.selectOption('#bulk-action', 'restart');
    await page.click('#bulk-apply');
    await confirm().filter({ hasText: 'Restart 1 of 1 selected jobs?' }).waitFor();
    await page.goto(`${ui}/#/infra`);
    await page.locator('#process-servers').waitFor();
    await confirm().waitFor({ state: 'detached' });

    // On a job's page: the job ends while "Kill job N?" is asked, the page draws it again, the question goes.
    await t.req('POST', '/JobDefinition/Waits', { body: { JobDefinitionType: 'BASH', Script: 'sleep 600' } });
    const running = (await t.req('POST', '/Job/Waits', { body: {} })).json.jobId as number;
    await waitForJob(get, running, ['Running']);
    await page.goto(`${ui}/#/job/${running}`);
    await page.click('#job-actions [data-action=kill]');
    await confirm()
      .filter({ hasText: `Kill job ${running}` })
      .waitFor();
    assert.equal((await t.req('PUT', `/Job/${running}/kill`)).status, 200);
    await page.locator('#job-status').filter({ hasText: 'Killed' }).waitFor({ timeout: 30_000 });
    await confirm().waitFor({ state: 'detached' });

    const jobs = (await get('/Job?JobDefinition=FailNow&Limit=100&fields=jobId')).json.items as { jobId: number }[];
    assert.ok(
      jobs.every((j) => j.jobId <= (id as number)),
      'no job was restarted by the closed confirmation',
    );
  });
});
