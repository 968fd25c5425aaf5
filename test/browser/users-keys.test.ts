import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser, screenshot, signIn, startDashboardServer } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * The Users & keys page in a real Chromium (docs/architecture.md §10): an administrator creates a user, makes it a
 * key and sees the key once; the key works on the JSON interface; a user who is not an administrator is not
 * offered the page.
 */

const skip = browserSkip();

describe('Users & keys page in Chromium', { skip }, () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let ui: string;

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('an administrator creates a user, makes a key and sees it once', async () => {
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
    await page.click('#nav-users');
    await page.locator('#users tr[data-user="admin"]').waitFor();

    await page.fill('#new-user input[name=name]', 'gina');
    await page.fill('#new-user input[name=password]', 'gina-password-1');
    await page.check('#new-user input[name=role][value=Operator]');
    await page.click('#new-user button[type=submit]');
    const row = page.locator('#users tr[data-user="gina"]');
    await row.waitFor();
    assert.deepEqual((await row.locator('td').allTextContents()).slice(0, 4), ['gina', 'Operator', 'set', 'enabled']);
    const stored = await t.req('GET', '/User/gina');
    assert.deepEqual([stored.json.Roles, stored.json.PasswordSet], [['Operator'], true]);

    await row.getByRole('button', { name: 'Keys' }).click();
    await page.fill('#new-key-form input[name=description]', 'made in the browser');
    await page.fill('#new-key-form input[name=days]', '30');
    await page.click('#new-key-form button[type=submit]');
    const shown = page.locator('#new-key-value');
    await shown.waitFor();
    const key = ((await shown.textContent()) ?? '').trim();
    assert.match(key, /^\S{16,}$/);
    assert.match((await page.locator('#new-key').textContent()) ?? '', /not shown again/);
    await screenshot(page, 'users-keys');
    const keyRows = page.locator('#key-rows tr');
    assert.equal(await keyRows.count(), 1);
    assert.match((await keyRows.first().textContent()) ?? '', /made in the browser/);

    const read = await t.req('GET', '/Queue/GLOBAL.Default', { key });
    assert.equal(read.status, 200, 'the key works on the JSON interface');

    // Shown once: the list shown again (as another visit would) has the key's row, never the key.
    await row.getByRole('button', { name: 'Keys' }).click();
    await page.locator('#new-key').waitFor({ state: 'detached' });
    await page.locator('#key-rows tr').first().waitFor();
    assert.ok(!(await page.content()).includes(key), 'the key is no longer in the page');
  });

  test('a user who is not an administrator is not offered the page, and the server refuses it', async () => {
    const other = await (await browser.newContext()).newPage();
    await signIn(other, ui, 'gina', 'gina-password-1');
    assert.equal(await other.locator('#nav-users').isVisible(), false);
    await other.goto(`${ui}/#/users`);
    await other
      .locator('#main .error')
      .filter({ hasText: /Administrator/ })
      .waitFor();
    await other.close();
  });
});
