import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSkip, launchBrowser, startDashboardServer, screenshot, signIn } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';
import { waitFor, waitForJob } from '../helpers/wait.ts';

/**
 * The dashboard in a real Chromium against a real listening server with its local agent: sign in, find a job,
 * follow a running job's log and kill it, answer an approval, submit a definition through its form.
 */

const skip = browserSkip();

describe('dashboard in Chromium', { skip }, () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let ui: string;
  const get = (path: string) => t.req('GET', path);

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('signs in (a wrong password is refused with a message)', async () => {
    await page.goto(ui);
    assert.ok(page.url().endsWith('/millrace/ui/'), page.url());
    await page.fill('#user', 'admin');
    await page.fill('#password', 'not-the-password');
    await page.click('#signin button[type=submit]');
    await page.locator('#signin-error').filter({ hasText: 'Wrong user name or password' }).waitFor();
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
    await page.locator('#jobs').waitFor();
  });

  test('finds a job by filter', async () => {
    await t.req('POST', '/JobDefinition/Quick', {
      body: { JobDefinitionType: 'BASH', Script: 'echo quick' },
    });
    const ids: number[] = [];
    for (const d of ['nightly load of ledger', 'weekly report', 'nightly load of invoices']) {
      const r = await t.req('POST', '/Job/Quick', { body: { Description: d } });
      assert.equal(r.status, 201, r.body);
      ids.push(r.json.jobId);
    }
    await page.goto(`${ui}/#/jobs`);
    await page.fill('#f-Search', 'invoices');
    await page.click('#job-filters button[type=submit]');
    await page.locator(`#jobs-body tr[data-job="${ids[2]}"]`).waitFor();
    await waitFor('only the matching job listed', async () =>
      (await page.locator('#jobs-body tr').count()) === 1 ? true : undefined,
    );
    assert.ok(page.url().includes('Search=invoices'), 'the filter is in the address');
    await Promise.all(ids.map((id) => waitForJob(get, id)));
    await page.goto(`${ui}/#/jobs`);
    await page.locator(`#jobs-body tr[data-job="${ids[0]}"]`).waitFor();
  });

  test("follows a running job's log live and kills it without reloading", async () => {
    await t.req('POST', '/JobDefinition/Counter', {
      body: {
        JobDefinitionType: 'BASH',
        Script: 'for i in $(seq 1 100000); do echo "tick $i"; sleep 0.2; done',
        Description: 'Counts until killed',
      },
    });
    const job = (await t.req('POST', '/Job/Counter', { body: {} })).json;
    await page.goto(`${ui}/#/job/${job.jobId}`);
    await page.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });
    const log = page.locator('pre.log[data-file="stdout.log"]');
    await log.filter({ hasText: 'tick 3' }).waitFor({ timeout: 30_000 });
    await log.filter({ hasText: 'tick 8' }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'job-live-log');

    assert.equal(await page.locator('#job-actions [data-action=hold]').count(), 0, 'hold does not apply to Running');
    await page.click('#job-actions [data-action=kill]');
    await page.locator('#confirm').waitFor();
    await page.click('#confirm-no');
    assert.equal((await get(`/Job/${job.jobId}`)).json.Status, 'Running', 'declining the confirmation kills nothing');
    await page.click('#job-actions [data-action=kill]');
    await page.click('#confirm-yes');
    await page.locator('#job-status').filter({ hasText: 'Killed' }).waitFor({ timeout: 30_000 });
    assert.equal(
      await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
      true,
      'the page was not reloaded',
    );
    await page.locator('#job-actions [data-action=restart]').waitFor();
    assert.equal(await page.locator('#job-actions [data-action=kill]').count(), 0);
  });

  test('answers an approval from the inbox and its job completes', async () => {
    await t.req('POST', '/JobDefinition/Approve', {
      body: {
        JobDefinitionType: 'UserMessage',
        DefaultQueue: 'GLOBAL.System',
        UserMessage: {
          Text: 'Release the payroll run?',
          Participants: ['admin'],
          Responses: [
            { Response: 'Approve', Status: 'Completed' },
            { Response: 'Reject', Status: 'Error', ReturnCode: 5 },
          ],
        },
      },
    });
    const job = (await t.req('POST', '/Job/Approve', { body: {} })).json;
    const waiting = await waitForJob(get, job.jobId, ['Console']);
    await page.goto(`${ui}/#/inbox`);
    const card = page.locator(`#inbox-user [data-message="${waiting.UserMessage}"]`);
    await card.filter({ hasText: 'Release the payroll run?' }).waitFor();
    await screenshot(page, 'inbox');
    await card.locator('input[name=comment]').fill('checked the totals');
    await card.locator('button[data-response=Approve]').click();
    const done = await waitForJob(get, job.jobId);
    assert.equal(done.Status, 'Completed');
    assert.equal((await get(`/UserMessage/${waiting.UserMessage}`)).json.ReplyComment, 'checked the totals');
    await card.waitFor({ state: 'detached' });
  });

  test('submits a definition through its form; a bad value gives a message and submits nothing', async () => {
    await t.req('POST', '/JobDefinition/Load', {
      body: {
        JobDefinitionType: 'BASH',
        Script: 'echo "rows=$ROWS target=$TARGET"',
        Description: 'Loads rows into a target',
        Parameters: [
          { Name: 'ROWS', DataType: 'Number', Description: 'How many rows' },
          { Name: 'TARGET', DefaultValue: 'warehouse' },
        ],
      },
    });
    await page.goto(`${ui}/#/definitions`);
    await page.fill('#def-search', 'rows into');
    await page.press('#def-search', 'Enter');
    await page.click('a[href="#/definition/GLOBAL.Load"]');
    await page.locator('#p-ROWS').waitFor();
    assert.equal(await page.inputValue('#p-TARGET'), 'warehouse', 'the default is filled in');

    await page.click('#submit-button');
    await page.locator('#form-error').filter({ hasText: 'ROWS is mandatory' }).waitFor();
    await page.fill('#p-ROWS', 'twelve');
    await page.click('#submit-button');
    await page.locator('#form-error').filter({ hasText: 'ROWS must be a number, not "twelve"' }).waitFor();
    await screenshot(page, 'definition-form');
    const none = await get('/Job?JobDefinition=GLOBAL.Load');
    assert.equal(none.status, 200, none.body);
    assert.deepEqual(none.json.items, [], 'nothing was submitted');

    await page.fill('#p-ROWS', '12');
    await page.fill('#submit-description', 'from the form');
    await page.click('#submit-button');
    await page.waitForURL(/#\/job\/\d+$/);
    const jobId = Number(page.url().split('/').pop());
    const job = await waitForJob(get, jobId);
    assert.equal(job.Status, 'Completed');
    assert.equal(job.Description, 'from the form');
    await page.locator('pre.log[data-file="stdout.log"]').filter({ hasText: 'rows=12 target=warehouse' }).waitFor();

    // Resubmit with an edited parameter: a new job with the new value.
    await page.click('#job-actions [data-action=resubmit]');
    assert.equal(await page.inputValue('#p-ROWS'), '12', "the job's values are filled in");
    await page.fill('#p-ROWS', '7');
    await page.click('#submit-button');
    await page.waitForURL((url) => /#\/job\/\d+$/.test(url.hash) && !url.hash.endsWith(`/${jobId}`));
    const again = await waitForJob(get, Number(page.url().split('/').pop()));
    assert.equal(again.Status, 'Completed');
    await page.locator('pre.log[data-file="stdout.log"]').filter({ hasText: 'rows=7 target=warehouse' }).waitFor();
  });

  test("the submit form's max run time: a bad value submits nothing; a limit kills the job when it is reached", async () => {
    await t.req('POST', '/JobDefinition/Stuck', { body: { JobDefinitionType: 'BASH', Script: 'sleep 600' } });
    await page.goto(`${ui}/#/definition/GLOBAL.Stuck`);
    await page.locator('#submit-maxruntime').waitFor();
    await page.fill('#submit-maxruntime', '0');
    await page.click('#submit-button');
    await page
      .locator('#form-error')
      .filter({ hasText: 'Max run time must be whole seconds from 1 to 31536000, not "0".' })
      .waitFor();
    assert.deepEqual((await get('/Job?JobDefinition=GLOBAL.Stuck')).json.items, [], 'nothing was submitted');

    await page.fill('#submit-maxruntime', '2');
    await page.click('#submit-button');
    await page.waitForURL(/#\/job\/\d+$/);
    const jobId = Number(page.url().split('/').pop());
    assert.equal((await waitForJob(get, jobId)).Status, 'Killed');
    const items = (await get(`/Job/${jobId}/history`)).json.items as Array<{ Cause: string; Detail: string }>;
    assert.equal(items.at(-1)?.Cause, 'maxruntime');
    assert.equal(items.at(-1)?.Detail, `Job:${jobId} ran past its MaxRunTime of 2 s`);
  });

  test('shows a chain as its steps and calls, updating live', async () => {
    const sleep = (ms: number) => ({
      JobDefinition: 'GLOBAL.System_Sleep',
      ParameterMappings: [{ Parameter: 'MilliSeconds', Source: 'Value', Value: String(ms) }],
    });
    await t.req('POST', '/JobDefinition/Nightly', {
      body: { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' },
    });
    const def = await t.req('POST', '/JobChain/Nightly', {
      body: {
        Steps: [
          { Name: 'Extract', Calls: [sleep(1500), sleep(1500)] },
          { Name: 'Load', Calls: [sleep(300)] },
        ],
      },
    });
    assert.equal(def.status, 201, def.body);
    const chain = (await t.req('POST', '/Job/Nightly', { body: {} })).json;
    await page.goto(`${ui}/#/job/${chain.jobId}`);
    await page.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });
    await page.locator('#chain > li').nth(1).waitFor();
    assert.equal(await page.locator('#chain > li').count(), 2, 'two steps');
    assert.equal(await page.locator('#chain li li').count(), 3, 'three calls');
    await page.locator('#job-status').filter({ hasText: 'Completed' }).waitFor({ timeout: 30_000 });
    await waitFor('every step and call shown Completed', async () => {
      const statuses = await page.locator('#chain [data-status-of]').allTextContents();
      return statuses.length === 5 && statuses.every((s) => s === 'Completed') ? true : undefined;
    });
    assert.equal(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), true);
    await screenshot(page, 'chain');
  });

  test('shows queues and process servers with their load and agents', async () => {
    await page.goto(`${ui}/#/infra`);
    const local = page.locator('#process-servers tr[data-process-server="GLOBAL.Local"]');
    await local.locator('td.agent', { hasText: /^connected$/ }).waitFor();
    assert.match((await local.textContent()) ?? '', /0 \/ 8/);
    const queue = page.locator('#queues tr[data-queue="GLOBAL.Default"]');
    await queue.locator('button', { hasText: 'Hold' }).click();
    await queue.locator('button', { hasText: 'Release' }).waitFor();
    assert.equal((await get('/Queue/GLOBAL.Default')).json.Held, true);
    await screenshot(page, 'queues-and-servers');
    await queue.locator('button', { hasText: 'Release' }).click();
    await queue.locator('button', { hasText: 'Hold' }).waitFor();
    assert.equal((await get('/Queue/GLOBAL.Default')).json.Held, false);

    // Paging by the server's cursor: every job once, newest first, and back.
    await page.goto(`${ui}/#/jobs?Limit=5`);
    const pageIds = async () =>
      await page.locator('#jobs-body tr').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-job'))));
    await page.locator('#jobs-body tr').nth(4).waitFor();
    const total = (await get('/Job?Limit=1000&fields=jobId')).json.items.length;
    const seen: number[] = [];
    for (;;) {
      const ids = await pageIds();
      seen.push(...ids);
      if (await page.locator('#older').isDisabled()) break;
      const last = ids.at(-1);
      await page.click('#older');
      await page.locator(`#jobs-body tr[data-job="${last}"]`).waitFor({ state: 'detached' });
    }
    assert.equal(seen.length, total, 'every job listed');
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => b - a),
      'newest first, none repeated',
    );
    assert.equal(new Set(seen).size, total);
    await page.click('#newer');
    await page.locator(`#jobs-body tr[data-job="${seen.at(-6)}"]`).waitFor();

    // The monitor after the run above: completed, killed, failed, chain and approval jobs.
    await page.goto(`${ui}/#/jobs`);
    await page.locator('#jobs-body tr').nth(10).waitFor();
    await screenshot(page, 'job-monitor');
  });
});
