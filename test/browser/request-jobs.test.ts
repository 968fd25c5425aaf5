import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser, screenshot, signIn, startDashboardServer } from '../helpers/browser.ts';
import { postCreated as post, submit, waitForStatus } from '../helpers/jobs.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * HTTP and SQL jobs in the dashboard, in Chromium: a definition's request or script on its page, and a job's CSV
 * file (a SQL job's result.csv; here written by a BASH job, which the page treats alike) as a table of its first rows.
 */
const skip = browserSkip();

describe('HTTP and SQL jobs in the dashboard', { skip }, () => {
  let t: TestServer;
  let ui: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('the definition page shows an HTTP request and a SQL script, as text', async () => {
    await post(t, '/JobDefinition/GLOBAL.Ping', {
      JobDefinitionType: 'HTTP',
      Http: {
        Method: 'POST',
        Url: 'http://127.0.0.1:1/orders/${ID}',
        Headers: { 'X-Trace': '<b>bold</b>' },
        Body: '{"a": 1}',
      },
    });
    await page.goto(`${ui}/#/definition/GLOBAL.Ping`);
    const request = page.locator('#definition-request');
    await request.waitFor();
    assert.equal(await request.textContent(), 'POST http://127.0.0.1:1/orders/${ID}\nX-Trace: <b>bold</b>\n\n{"a": 1}');
    await post(t, '/Credential/GLOBAL.Db', { RealUser: 'report', Password: 'not shown' });
    await post(t, '/JobDefinition/GLOBAL.Report', {
      JobDefinitionType: 'SQL',
      Sql: { Credential: 'GLOBAL.Db', Database: 'postgres://db:5432/sales', Script: 'SELECT :ID' },
    });
    await page.goto(`${ui}/#/definition/GLOBAL.Report`);
    await page.locator('#definition-sql').filter({ hasText: 'SELECT :ID' }).waitFor();
    assert.match(
      (await page.locator('main').textContent()) ?? '',
      /postgres:\/\/db:5432\/sales · credential GLOBAL\.Db/,
    );
  });

  test("a finished job's result.csv shows as a table of its first rows", async () => {
    const rows = ['id,note', '1,plain', '2,"with ""quotes"", a comma"', '3,"two\\nlines"'];
    for (let i = 4; i <= 50; i++) rows.push(`${i},row ${i}`);
    await post(t, '/JobDefinition/GLOBAL.Csv', {
      JobDefinitionType: 'BASH',
      Script: `printf '%b\\r\\n' ${rows.map((r) => `'${r}'`).join(' ')} > "$MILLRACE_FILES/result.csv"`,
    });
    const job = await submit(t, 'GLOBAL.Csv');
    await waitForStatus(t, job.jobId, 'Completed');
    await page.goto(`${ui}/#/job/${job.jobId}`);
    const table = page.locator('.csv-preview[data-file="result.csv"] table');
    await table.waitFor();
    assert.deepEqual(await table.locator('th').allTextContents(), ['id', 'note']);
    const cells = await table
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    assert.equal(cells.length, 20, `${await page.locator('.csv-preview').textContent()} ${JSON.stringify(cells)}`);
    assert.deepEqual(cells.slice(0, 3), [
      ['1', 'plain'],
      ['2', 'with "quotes", a comma'],
      ['3', 'two\nlines'],
    ]);
    await screenshot(page, 'job-result-csv');
  });
});
