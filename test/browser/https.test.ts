import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { browserSkip, CHROMIUM, CHROMIUM_ARGS, signIn, startDashboardServer } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';
import { makeCa, makeLeaf, spkiHash } from '../helpers/tls.ts';

/**
 * The dashboard over HTTPS (docs/architecture.md §10) in Chromium. The browser trusts the server's key by its hash
 * (`--ignore-certificate-errors-spki-list`, the way to trust one certificate without a system store); a browser not
 * told so refuses the page, which shows that the page really comes over TLS with that certificate.
 */

const skip = browserSkip();

describe('the dashboard over HTTPS', { skip }, () => {
  let t: TestServer;
  let ui = '';
  let dir = '';
  let spki = '';
  const browsers: Browser[] = [];
  const launch = async (args: string[]) => {
    const b = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...args] });
    browsers.push(b);
    return b;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'millrace-https-ui-'));
    const ca = makeCa(dir, 'ca');
    const leaf = makeLeaf(dir, ca, 'server');
    spki = spkiHash(leaf.cert);
    ({ t } = await startDashboardServer({ tls: { cert: leaf.cert, key: leaf.key } }));
    const { port } = t.server.app.server.address() as { port: number };
    ui = `https://127.0.0.1:${port}/millrace/ui/`;
  });
  after(async () => {
    for (const b of browsers) await b.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a browser not trusting the certificate refuses the page', async () => {
    const page = await (await launch([])).newPage();
    await assert.rejects(page.goto(ui), /ERR_CERT_AUTHORITY_INVALID/);
  });

  test('a browser trusting it signs in, sees the job monitor, and holds a Secure session cookie', async () => {
    const context = await (await launch([`--ignore-certificate-errors-spki-list=${spki}`])).newContext();
    const page = await context.newPage();
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
    await page.locator('#jobs').waitFor();
    assert.ok(page.url().startsWith('https://'), page.url());
    const session = (await context.cookies()).find((c) => c.name === 'millrace_session');
    assert.ok(session, 'signed in with a session cookie');
    assert.equal(session.secure, true, 'the cookie is sent over HTTPS only');
  });
});
