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
import { postCreated as post } from '../helpers/jobs.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * The Audit page as an auditor uses it in Chromium (docs/architecture.md §18): filtered by object and by user, a
 * change's fields before and after side by side, and a deleted definition restored after a confirmation.
 */

const skip = browserSkip();
/** A description that would run script if the page took it as markup. */
const HOSTILE = '<img src=x onerror="window.__xss = 1">';

describe('the Audit page in Chromium', { skip }, () => {
  let t: TestServer;
  let ui: string;
  let browser: Browser;
  let page: Page;
  let dialogs: string[];

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' })).newPage();
    dialogs = recordDialogs(page);
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('filter by object and user, the diff side by side, and a restore after confirming', async () => {
    await post(t, '/JobDefinition/GLOBAL.Payroll', { JobDefinitionType: 'BASH', Script: 'echo pay', Priority: 40 });
    await post(t, '/Queue/GLOBAL.Elsewhere', {});
    const changed = await t.req('PUT', '/JobDefinition/GLOBAL.Payroll', {
      body: { Priority: 80, Description: HOSTILE },
    });
    assert.equal(changed.status, 200, changed.body);
    assert.equal((await t.req('DELETE', '/JobDefinition/GLOBAL.Payroll')).status, 204);

    await page.click('#nav a[data-page=audit]');
    await page.fill('#au-Type', 'JobDefinition');
    await page.fill('#au-Key', 'GLOBAL.Payroll');
    await page.click('#audit-filters button[type=submit]');
    await page.waitForURL(/Key=GLOBAL\.Payroll/);
    const rows = page.locator('#audit tbody tr');
    await rows.first().waitFor();
    await page.locator('#audit tbody tr[data-action=create]').waitFor();
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action'))), [
      'delete',
      'update',
      'create',
    ]);
    assert.equal(await page.locator('#audit tbody tr', { hasText: 'GLOBAL.Elsewhere' }).count(), 0, 'filtered');

    // The change, side by side: Priority 40 → 80, the description shown as text.
    await page.locator('#audit tbody tr[data-action=update] button').click();
    const priority = page.locator('#audit-diff tr[data-field=Priority]');
    await priority.waitFor();
    assert.equal(((await priority.locator('td.before').textContent()) ?? '').trim(), '40');
    assert.equal(((await priority.locator('td.after').textContent()) ?? '').trim(), '80');
    assert.equal(
      ((await page.locator('#audit-diff tr[data-field=Description] td.after').textContent()) ?? '').trim(),
      HOSTILE,
      'shown as text, never as markup',
    );
    await screenshot(page, 'audit-diff');

    // Restore the deletion: asked first; "Keep it" changes nothing, "Restore" brings it back.
    await page.locator('#audit tbody tr[data-action=delete] button').click();
    await page.locator('#audit-entry h2', { hasText: 'delete' }).waitFor();
    await page.click('#audit-restore');
    await page.click('#confirm-no');
    assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Payroll')).status, 404, 'kept deleted');
    await page.click('#audit-restore');
    await page.click('#confirm-yes');
    await page.locator('.notice', { hasText: 'restored from entry' }).waitFor();
    const back = await t.req('GET', '/JobDefinition/GLOBAL.Payroll');
    assert.equal(back.status, 200, back.body);
    assert.equal(back.json.Priority, 80);
    assert.equal(back.json.Script, 'echo pay');
    await page.locator('#audit tbody tr[data-action=restore]').waitFor();

    // By user: the administrator's entries only.
    await page.fill('#au-Type', '');
    await page.fill('#au-Key', '');
    await page.fill('#au-User', 'nobody-here');
    await page.click('#audit-filters button[type=submit]');
    await page.locator('#audit-info', { hasText: 'No entries match' }).waitFor();
    await page.fill('#au-User', 'admin');
    await page.click('#audit-filters button[type=submit]');
    await page.locator('#audit tbody tr', { hasText: 'GLOBAL.Elsewhere' }).waitFor();
    assert.ok(
      (await page.locator('#audit tbody tr td:nth-child(3)').allInnerTexts()).every((u) => u === 'admin'),
      'only the administrator',
    );
    assert.deepEqual(dialogs, [], 'no script ran from the data');
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
  });
});
