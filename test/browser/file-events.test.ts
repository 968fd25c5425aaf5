import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { waitFor } from '../helpers/wait.ts';

/**
 * An event definition's page as an operator sees it in Chromium: its file watches, each with what the agent of its
 * process server last reported (the real local agent, watching real folders).
 */

const skip = browserSkip();
const HOSTILE = '<img src=x onerror="window.__xss = 1">';

describe('an event definition and its file watches in Chromium', { skip }, () => {
  let t: TestServer;
  let ui: string;
  let browser: Browser;
  let page: Page;
  let root: string;
  let outside: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'millrace-ui-watch-'));
    outside = await mkdtemp(join(tmpdir(), 'millrace-ui-outside-'));
    ({ t, ui } = await startDashboardServer({ watchRoots: [root] }));
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' })).newPage();
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    if (root) await rm(root, { recursive: true, force: true });
    if (outside) await rm(outside, { recursive: true, force: true });
  });

  test('lists each watch with its last poll, files seen and last error', async () => {
    const inbox = join(root, 'in');
    await mkdir(inbox);
    await writeFile(join(inbox, 'a.csv'), 'a\n');
    await post(t, '/EventDefinition/GLOBAL.Arrived', {
      Description: HOSTILE,
      FileEvents: [
        { ProcessServer: 'GLOBAL.Local', Directory: inbox, Pattern: '*.csv', PollSeconds: 1, StableSeconds: 0 },
        { ProcessServer: 'GLOBAL.Local', Directory: outside, PollSeconds: 1, StableSeconds: 0 },
        { ProcessServer: 'GLOBAL.Local', Directory: '/off', Enabled: false },
      ],
    });
    // What the page will show, once the agent has looked at both folders.
    await waitFor('the agent to report both watches', async () => {
      const items = (await t.req('GET', '/ProcessServer/GLOBAL.Local/filewatches')).json.items;
      return items.some((w: { FilesSeen: number }) => w.FilesSeen === 1) &&
        items.some((w: { LastError: string | null }) => w.LastError !== null)
        ? true
        : undefined;
    });
    const dialogs = recordDialogs(page);
    await page.goto(`${ui}/#/eventdefinition/GLOBAL.Arrived`);
    await page.locator('#file-watches tbody tr').nth(2).waitFor();
    const rows = await page
      .locator('#file-watches tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
    await screenshot(page, 'event-definition-file-watches');
    assert.deepEqual(rows[0]?.slice(0, 7), ['GLOBAL.Local', inbox, '*.csv', '1', '0', '—', 'true']);
    assert.match(rows[0]?.[7] ?? '', /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2},\d{3} UTC$/, 'last poll');
    assert.equal(rows[0]?.[8], '1', 'files seen');
    assert.equal(rows[0]?.[9], '—', 'no error');
    assert.deepEqual(rows[1]?.slice(0, 3), ['GLOBAL.Local', outside, '*']);
    assert.equal(rows[1]?.[9], `${outside} is not inside a --watch-root folder of this agent (${root})`);
    assert.deepEqual(rows[2]?.slice(6), ['false', 'not watched (disabled)']);
    assert.equal(await page.locator('#event-definition-info [data-field="Description"]').textContent(), HOSTILE);
    assert.deepEqual(dialogs, []);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
  });
});
