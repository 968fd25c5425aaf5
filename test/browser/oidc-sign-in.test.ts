import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser, screenshot, startDashboardServer } from '../helpers/browser.ts';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/oidc-provider.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';

/**
 * docs/architecture.md §10, single sign-on as a person meets it in Chromium: the sign-in page offers "Sign in with
 * <issuer>", the browser goes through the real provider's (oidc-provider) login and consent pages and lands in the
 * dashboard signed in, with the roles the provider's groups claim maps to; the user is created at that first
 * sign-in, or refused when users are not created; a user whose groups map to no role is refused; under
 * `--oidc-only` the page offers no password form.
 */

const skip = browserSkip();

interface Dashboard {
  t: TestServer;
  ui: string;
}

describe('single sign-on in Chromium', { skip }, () => {
  let idp: TestIdentityProvider;
  let dir: string;
  let creating: Dashboard;
  let refusing: Dashboard;
  let browser: Browser;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-oidc-ui-'));
    idp = await startIdentityProvider({
      users: { ada: ['millrace-operators', 'unrelated-group'], grace: ['unrelated-group'], carol: ['millrace-admins'] },
    });
    creating = await startDashboardServer({ oidc: await idp.settings(dir) });
    refusing = await startDashboardServer({ oidc: await idp.settings(dir, { createUsers: false, only: true }) });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await creating?.t.close();
    await refusing?.t.close();
    await idp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A fresh browser profile: cookies name a host, not a port, and both servers listen on 127.0.0.1. */
  const newPage = async (): Promise<Page> => (await browser.newContext()).newPage();

  /** Clicks "Sign in with …", signs in on the provider's own login page (any password) and consents. */
  async function signInAtProvider(page: Page, d: Dashboard, login: string): Promise<void> {
    await page.goto(d.ui);
    const link = page.locator('#sso-signin');
    assert.equal(await link.textContent(), `Sign in with ${new URL(idp.issuer).host}`);
    await link.click();
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
    await page.fill('input[name=login]', login);
    await page.fill('input[name=password]', 'any password');
    await page.click('button[type=submit]');
    await page.locator('button', { hasText: 'Continue' }).click();
    await page.waitForURL((u) => u.href.startsWith(d.ui));
  }

  const sessionOf = (page: Page) =>
    page.evaluate(async () => {
      const res = await fetch('api/session');
      return { status: res.status, body: res.status === 200 ? await res.json() : null };
    });

  test('a first sign-in through the provider creates the user with the roles its groups map to', async () => {
    assert.equal(await creating.t.server.store.getUser('ada'), undefined);
    const page = await newPage();
    await signInAtProvider(page, creating, 'ada');
    await page.locator('#who').filter({ hasText: 'ada' }).waitFor();
    await page.locator('#jobs').waitFor();
    await screenshot(page, 'oidc-signed-in');
    const session = await sessionOf(page);
    assert.equal(session.status, 200);
    assert.deepEqual(session.body.roles, ['Operator']);
    const user = await creating.t.server.store.getUser('ada');
    assert.deepEqual(user?.roles, ['Operator']);
    assert.equal(user?.passwordHash, null, 'a user of the identity provider has no password');

    await page.click('#sign-out');
    await page.locator('#sso-signin').waitFor();
    assert.equal((await sessionOf(page)).status, 401);
    // Passwords keep working beside single sign-on.
    await page.fill('#user', 'admin');
    await page.fill('#password', ADMIN_PASSWORD);
    await page.click('#signin button[type=submit]');
    await page.locator('#who').filter({ hasText: 'admin' }).waitFor();
  });

  test('a user whose groups map to no Millrace role is refused', async () => {
    const page = await newPage();
    await signInAtProvider(page, creating, 'grace');
    await page.locator('#signin-error').filter({ hasText: 'grants you no Millrace role' }).waitFor();
    assert.equal((await sessionOf(page)).status, 401);
    assert.equal(await creating.t.server.store.getUser('grace'), undefined);
    assert.equal(new URL(page.url()).search, '', 'the reason is taken out of the address');
  });

  test('with --oidc-only and without creating users: no password form, an unknown user refused, a known one in', async () => {
    const page = await newPage();
    await page.goto(refusing.ui);
    await page.locator('#sso-signin').waitFor();
    assert.equal(await page.locator('#password').count(), 0, 'no password field under --oidc-only');
    await signInAtProvider(page, refusing, 'carol');
    await page.locator('#signin-error').filter({ hasText: 'Your account is not known to Millrace' }).waitFor();
    await screenshot(page, 'oidc-unknown-user');
    assert.equal((await sessionOf(page)).status, 401);
    assert.equal(await refusing.t.server.store.getUser('carol'), undefined);

    await refusing.t.server.accounts.addUser('carol', { roles: ['Viewer'] });
    // The provider remembers carol's sign-in; it asks a native client's consent every time.
    await page.locator('#sso-signin').click();
    await page.locator('button', { hasText: 'Continue' }).click();
    await page.locator('#who').filter({ hasText: 'carol' }).waitFor();
    assert.deepEqual((await sessionOf(page)).body.roles, ['Administrator'], 'the groups claim decides the roles');
  });
});
