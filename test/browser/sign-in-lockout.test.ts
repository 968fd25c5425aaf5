import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakeClock } from '../../src/time/clock.ts';
import { browserSkip, launchBrowser, startDashboardServer } from '../helpers/browser.ts';
import { loopback, requestFrom } from '../helpers/from-address.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * docs/architecture.md §10 as the administrator meets it in Chromium: while someone guesses `admin`'s password from
 * ten other addresses, the administrator signs in through the dashboard's form from an address that never failed;
 * once it has mistyped too, the form says to wait. The virtual clock holds the minute still.
 */

const skip = browserSkip();

describe("the dashboard's sign-in while admin's password is being guessed", { skip }, () => {
  let t: TestServer;
  let origin: string;
  let ui: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ t, origin, ui } = await startDashboardServer(
      { authFailuresPerMinute: 20 },
      { clock: new FakeClock(Date.now()) },
    ));
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const submitForm = async (password: string) => {
    await page.fill('#user', 'admin');
    await page.fill('#password', password);
    await page.click('#signin button[type=submit]');
  };

  test('the administrator signs in from a clean address, and is told to wait after failing', async () => {
    for (let i = 0; i < 25; i++) {
      const res = await requestFrom(loopback(2 + (i % 10)), `${ui}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ user: 'admin', password: `guess-${i}` }),
      });
      assert.ok(res.status === 401 || res.status === 429, `guess ${i}: ${res.status} ${res.body}`);
    }
    await page.goto(ui);
    await submitForm(ADMIN_PASSWORD);
    await page.locator('#who').filter({ hasText: 'admin' }).waitFor();
    await page.locator('#jobs').waitFor();

    await page.click('#sign-out');
    await submitForm('a-typo');
    await page.locator('#signin-error').filter({ hasText: 'Wrong user name or password' }).waitFor();
    await submitForm(ADMIN_PASSWORD);
    await page.locator('#signin-error').filter({ hasText: 'Too many failed attempts; try again later' }).waitFor();
    assert.equal(await page.locator('#who').isVisible(), false, 'not signed in');
  });
});
