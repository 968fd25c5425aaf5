import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser, signIn, startDashboardServer } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';
import { waitFor, waitForJob } from '../helpers/wait.ts';

/**
 * The dashboard in a real Chromium against a real listening server and its local agent, watched as a developer
 * would with the browser's console open: following a job's log logs no error (the follower asks the file's size
 * before reading on, never for a range past its end) and shows the whole output; a confirmation closes when the
 * page it was asked on is left.
 */

const skip = browserSkip();

/** Everything the browser reports as going wrong: console errors, uncaught exceptions, failed requests. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  page.on('requestfailed', (r) => errors.push(`failed ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  return errors;
}

describe('the dashboard leaves the browser console clean', { skip }, () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let ui: string;
  let errors: string[] = [];
  const get = (path: string) => t.req('GET', path);

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    // Before signing in the page asks who is signed in and is told 401: that one is expected.
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
    errors = watchErrors(page);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test("following a running job's log shows all of it and logs no error", async () => {
    // Bursts of lines with pauses longer than the follower's look, so it often finds nothing new; multi-byte
    // characters, so reads that split one must not garble it.
    await t.req('POST', '/JobDefinition/Bursts', {
      body: {
        JobDefinitionType: 'BASH',
        Script: 'for i in 1 2 3 4 5 6; do for j in $(seq 1 20); do echo "burst $i line $j: ü€"; done; sleep 1.5; done',
      },
    });
    const submitted = await t.req('POST', '/Job/Bursts', { body: {} });
    assert.equal(submitted.status, 201, submitted.body);
    const id = submitted.json.jobId as number;
    await waitForJob(get, id, ['Running']);
    await page.goto(`${ui}/#/job/${id}`);
    const log = page.locator('pre.log[data-file="stdout.log"]');
    await log.filter({ hasText: 'burst 1 line 20' }).waitFor({ timeout: 30_000 });

    const done = await waitForJob(get, id, undefined, 60_000);
    assert.equal(done.Status, 'Completed');
    const expected = Array.from({ length: 6 }, (_, i) =>
      Array.from({ length: 20 }, (_, j) => `burst ${i + 1} line ${j + 1}: ü€\n`).join(''),
    ).join('');
    const stdout = done.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
    assert.equal((await get(`/JobFile/${stdout.uniqueId}/content`)).body, expected, 'what the job wrote');
    await waitFor(
      'the whole output shown',
      async () => ((await log.textContent()) === expected ? true : undefined),
      30_000,
    );
    await page.locator('#job-status').filter({ hasText: 'Completed' }).waitFor();
    assert.equal(await page.locator('pre.log[data-file="stderr.log"]').textContent(), '', 'an empty stderr.log');
    assert.deepEqual(errors, []);
  });

  test('a confirmation closes when the page changes, and kills nothing', async () => {
    await t.req('POST', '/JobDefinition/Forever', {
      body: { JobDefinitionType: 'BASH', Script: 'while true; do echo tick; sleep 1; done' },
    });
    const id = (await t.req('POST', '/Job/Forever', { body: {} })).json.jobId as number;
    await waitForJob(get, id, ['Running']);
    const confirm = page.locator('#confirm');
    const askToKill = async () => {
      await page.goto(`${ui}/#/job/${id}`);
      await page.click('#job-actions [data-action=kill]');
      await confirm.filter({ hasText: `Kill job ${id}` }).waitFor();
    };

    await page.goto(`${ui}/#/jobs`);
    await askToKill();
    await page.goBack();
    await page.locator('#jobs').waitFor();
    await confirm.waitFor({ state: 'detached' });
    assert.ok(page.url().endsWith('#/jobs'), page.url());

    await askToKill();
    await page.goto(`${ui}/#/infra`);
    await page.locator('#process-servers').waitFor();
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await get(`/Job/${id}`)).json.Status, 'Running', 'a closed confirmation kills nothing');

    // A confirmation still confirms.
    await askToKill();
    await page.click('#confirm-yes');
    await page.locator('#job-status').filter({ hasText: 'Killed' }).waitFor({ timeout: 30_000 });
    await confirm.waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
  });
});
