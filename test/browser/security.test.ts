import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  browserSkip,
  launchBrowser,
  startDashboardServer,
  recordDialogs,
  screenshot,
  signIn,
} from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';
import { waitForJob } from '../helpers/wait.ts';

/**
 * The dashboard's defences in a real Chromium: hostile text in job output, parameter values and descriptions is shown as
 * text; the page runs under a strict CSP; the cookie cannot be read or used cross-site and a state change made
 * with it needs the CSRF token; a user without a privilege sees no button and the server refuses anyway.
 */

const skip = browserSkip();
const SCRIPT = '<script>window.__xss = 1; alert("script")</script>';
const IMG = '<img src=x onerror="window.__xss = 2; alert(\'img\')">';
const BOTH = `${SCRIPT} ${IMG}`;

describe('dashboard security in Chromium', { skip }, () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let dialogs: string[];
  let origin: string;
  let ui: string;
  const get = (path: string) => t.req('GET', path);

  before(async () => {
    ({ t, origin, ui } = await startDashboardServer());
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    dialogs = recordDialogs(page);
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function assertInert(where: string): Promise<void> {
    assert.deepEqual(dialogs, [], `${where}: no dialog opened`);
    const state = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: number }).__xss,
      imgs: document.querySelectorAll('img').length,
      // The runtime chart's library, which a definition's page loads from the server's own `vendor/`, is not markup.
      scripts: [...document.scripts]
        .map((s) => s.getAttribute('src'))
        .filter((src) => src !== 'vendor/uPlot.iife.min.js'),
    }));
    assert.deepEqual(state, { xss: undefined, imgs: 0, scripts: ['app/main.js'] }, where);
  }

  test('job output, parameter values and descriptions are shown as text', async () => {
    const def = await t.req('POST', '/JobDefinition/Hostile', {
      body: {
        JobDefinitionType: 'BASH',
        Description: BOTH,
        Script: `printf '%s\\n' "$V"; printf '%s\\n' "$V" >&2; OUTV="$V"`,
        Parameters: [
          { Name: 'V', DefaultValue: IMG, Description: SCRIPT },
          { Name: 'OUTV', Direction: 'Out' },
        ],
      },
    });
    assert.equal(def.status, 201, def.body);
    const sub = await t.req('POST', '/Job/Hostile', {
      body: { Description: BOTH, JobParameters: [{ Name: 'V', InValueString: BOTH }] },
    });
    assert.equal(sub.status, 201, sub.body);
    const job = await waitForJob(get, sub.json.jobId);
    assert.equal(job.Status, 'Completed', JSON.stringify(job.JobNotes));

    await page.goto(`${ui}/#/job/${job.jobId}`);
    await page.locator('pre.log[data-file="stdout.log"]').filter({ hasText: BOTH }).waitFor();
    await page.locator('pre.log[data-file="stderr.log"]').filter({ hasText: IMG }).waitFor();
    await page.locator('#job-info').filter({ hasText: BOTH }).waitFor();
    const values = await page.locator('#job-params td.value').allInnerTexts();
    assert.ok(values.filter((v) => v === BOTH).length >= 2, `In and Out values shown literally: ${values}`);
    await assertInert('job detail');

    await page.goto(`${ui}/#/definition/GLOBAL.Hostile`);
    await page.locator('#definition-description').filter({ hasText: BOTH }).waitFor();
    assert.equal(await page.inputValue('#p-V'), IMG);
    await page.locator('.pdesc').filter({ hasText: SCRIPT }).waitFor();
    await assertInert('definition');

    await page.goto(`${ui}/#/jobs`);
    await page.locator(`#jobs-body tr[data-job="${job.jobId}"] td.desc`).filter({ hasText: BOTH }).waitFor();
    await assertInert('job monitor');
    await screenshot(page, 'xss-as-text');
  });

  test('the page is served under a strict Content-Security-Policy', async () => {
    const res = await page.goto(`${ui}/`);
    assert.ok(res);
    const headers = res.headers();
    const csp = headers['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.ok(!csp.includes('unsafe-inline'), csp);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    // The policy is in force: an inline script added at run time does not run.
    await page.locator('#who').waitFor();
    const ran = await page.evaluate(async () => {
      const s = document.createElement('script');
      s.textContent = 'window.__inline = true';
      document.body.appendChild(s);
      await new Promise((r) => setTimeout(r, 50));
      return (window as unknown as { __inline?: boolean }).__inline === true;
    });
    assert.equal(ran, false);
  });

  test('the session cookie is HttpOnly and SameSite=Strict; a cookie PUT without the CSRF token is refused', async () => {
    const context = page.context();
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'millrace_session');
    assert.ok(session, 'session cookie set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(session.path, '/millrace/');
    assert.ok(session.expires > Date.now() / 1000, 'expiring');
    assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read it');

    const url = `${origin}${t.base}/Queue/GLOBAL.Default`;
    const refused = await context.request.put(url, { data: { Held: true } });
    assert.equal(refused.status(), 403);
    assert.match((await refused.json()).message, /CSRF/);
    assert.equal((await get('/Queue/GLOBAL.Default')).json.Held, false);

    const csrf = await page.evaluate(async () => (await (await fetch('api/session')).json()).csrf);
    const accepted = await context.request.put(url, { data: { Held: true }, headers: { 'X-Millrace-CSRF': csrf } });
    assert.equal(accepted.status(), 200);
    assert.equal((await get('/Queue/GLOBAL.Default')).json.Held, true);
    await t.req('PUT', '/Queue/GLOBAL.Default', { body: { Held: false } });
  });

  test('a viewer sees no buttons and the server refuses their changes', async () => {
    await t.loginWithGrants('vic', 'vic-password-123', ['*:*:View']);
    await t.req('POST', '/JobDefinition/Later', { body: { JobDefinitionType: 'BASH', Script: 'true' } });
    const held = (await t.req('POST', '/Job/Later', { body: { HoldOnSubmit: true } })).json;
    await waitForJob(get, held.jobId, ['Held']);

    const viewer = await (await browser.newContext()).newPage();
    const viewerDialogs = recordDialogs(viewer);
    await signIn(viewer, ui, 'vic', 'vic-password-123');
    await viewer.goto(`${ui}/#/job/${held.jobId}`);
    await viewer.locator('#job-actions').filter({ hasText: 'No action applies' }).waitFor();
    assert.equal(await viewer.locator('#job-actions button').count(), 0);
    await viewer.goto(`${ui}/#/definition/GLOBAL.Later`);
    await viewer.getByText('You may not submit this definition.').waitFor();
    await viewer.goto(`${ui}/#/infra`);
    await viewer.locator('#queues tr[data-queue="GLOBAL.Default"]').waitFor();
    assert.equal(await viewer.locator('#queues button, #process-servers button').count(), 0);

    const status = await viewer.evaluate(async (path) => {
      const me = await (await fetch('api/session')).json();
      const res = await fetch(`${me.jsonBase}${path}`, { method: 'PUT', headers: { 'X-Millrace-CSRF': me.csrf } });
      return res.status;
    }, `/Job/${held.jobId}/release`);
    assert.equal(status, 403);
    assert.equal((await get(`/Job/${held.jobId}`)).json.Status, 'Held');
    assert.deepEqual(viewerDialogs, []);

    // Sign-out ends the session on the server: the old cookie no longer opens anything.
    const cookie = (await viewer.context().cookies()).find((c) => c.name === 'millrace_session');
    assert.ok(cookie);
    await viewer.click('#sign-out');
    await viewer.locator('#signin').waitFor();
    const replay = await fetch(`${origin}${t.base}/Queue/GLOBAL.Default`, {
      headers: { cookie: `millrace_session=${cookie.value}` },
    });
    assert.equal(replay.status, 401);
    await viewer.context().close();
  });
});
