import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { readCar } from '../../src/car/archive.ts';
import {
  browserSkip,
  launchBrowser,
  recordDialogs,
  screenshot,
  signIn,
  startDashboardServer,
} from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';
import { waitForJob } from '../helpers/wait.ts';

/**
 * Definitions in the console, in a real Chromium against a listening server: created through the form made from the
 * registry (a refused value shown at its field, nothing stored), edited after a diff, submitted, copied, exported,
 * deleted; a Viewer is offered none of it.
 */

const skip = browserSkip();

describe('definitions edited in the console', { skip }, () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let ui: string;
  const pageErrors: string[] = [];
  const get = (path: string) => t.req('GET', path);
  /** The message shown at a field of the form. */
  const fieldError = (field: string) =>
    page.locator(`[data-field="${field}"] > .field-error, [data-field="${field}"] > div > .field-error`);

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    browser = await launchBrowser();
    page = await (
      await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
    ).newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await signIn(page, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('creates a BASH definition through the form: a bad value is shown at its field and nothing is saved', async () => {
    await page.goto(`${ui}/#/definitions`);
    await page.click('#definition-new');
    await page.locator('[data-field="Script"]').waitFor();
    await page.fill('[id="f-Name"]', 'Nightly');
    await page.selectOption('[id="f-JobDefinitionType"]', 'BASH');
    await page.fill('[id="f-Script"]', 'echo "hello $WHO"');
    await page.fill('[id="f-Priority"]', '500');
    await page.fill('[id="f-Parameters"]', '[{"Name": "WHO", "DefaultValue": "world"}]');
    await page.click('#definition-save');
    await fieldError('Priority').filter({ hasText: 'Field "Priority" must be an integer from 1 to 100' }).waitFor();
    await page.locator('#definition-error').filter({ hasText: 'Not saved' }).waitFor();
    assert.equal(await fieldError('Script').textContent(), '', 'only the field named is marked');
    assert.equal((await get('/JobDefinition/GLOBAL.Nightly')).status, 404, 'nothing was saved');
    await screenshot(page, 'definition-create-refused');

    await page.fill('[id="f-Priority"]', '60');
    await page.click('#definition-save');
    await page.waitForURL(/#\/definition\/GLOBAL\.Nightly$/);
    const saved = (await get('/JobDefinition/GLOBAL.Nightly')).json;
    assert.equal(saved.Priority, 60);
    assert.equal(saved.Script, 'echo "hello $WHO"');
    assert.equal(saved.Parameters[0].Name, 'WHO');
    assert.equal(saved.DefaultQueue, 'GLOBAL.Default', 'a field left empty takes its declared default');
  });

  test('an edit shows what it changes before saving, and saves only once confirmed', async () => {
    await page.goto(`${ui}/#/definition/GLOBAL.Nightly`);
    await page.click('#definition-edit');
    await page.locator('[id="f-Description"]').waitFor();
    assert.equal(await page.locator('[id="f-Name"]').isDisabled(), true, 'the key is not edited');
    await page.fill('[id="f-Description"]', 'Greets at night');
    await page.fill('[id="f-Priority"]', '70');
    await page.click('#definition-save');
    const rows = page.locator('#diff-table tbody tr');
    await rows.first().waitFor();
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.textContent)), [
      'Description(empty)Greets at night',
      'Priority6070',
    ]);
    await screenshot(page, 'definition-edit-diff');
    await page.click('#diff-cancel');
    assert.equal((await get('/JobDefinition/GLOBAL.Nightly')).json.Priority, 60, 'not saved while unconfirmed');

    await page.click('#definition-save');
    await page.click('#diff-save');
    await page.locator('.notice').filter({ hasText: 'Saved JobDefinition GLOBAL.Nightly' }).waitFor();
    const saved = (await get('/JobDefinition/GLOBAL.Nightly')).json;
    assert.equal(saved.Priority, 70);
    assert.equal(saved.Description, 'Greets at night');
    assert.equal(saved.Script, 'echo "hello $WHO"', 'fields not changed are kept');

    // A value the server refuses on an edit is shown at its field too, and changes nothing.
    assert.equal(await page.locator('[id="f-Http.Url"]').isVisible(), false, 'an empty group is folded');
    await page.click('[data-field="Http"] > summary');
    await page.fill('[id="f-Http.Url"]', 'http://example.test/');
    await page.click('#definition-save');
    await page.click('#diff-save');
    await fieldError('Http').filter({ hasText: 'Field "Http"' }).waitFor();
    assert.equal((await get('/JobDefinition/GLOBAL.Nightly')).json.Http, null);
  });

  test('the saved definition is submitted from its page and its job runs', async () => {
    await page.goto(`${ui}/#/definition/GLOBAL.Nightly`);
    await page.fill('#p-WHO', 'console');
    await page.click('#submit-button');
    await page.waitForURL(/#\/job\/\d+$/);
    const jobId = Number(/#\/job\/(\d+)$/.exec(page.url())?.[1]);
    const job = await waitForJob(get, jobId);
    assert.equal(job.Status, 'Completed');
    assert.equal(job.JobDefinition, 'GLOBAL.Nightly');
  });

  test('a copy starts from the original with a new name; the CAR export downloads; delete asks first', async () => {
    await page.goto(`${ui}/#/definition/GLOBAL.Nightly`);
    await page.click('#definition-actions [data-action="copy"]');
    await page.locator('[id="f-Name"]').waitFor();
    assert.equal(await page.inputValue('[id="f-Name"]'), 'Nightly_copy');
    assert.equal(await page.inputValue('[id="f-Script"]'), 'echo "hello $WHO"');
    await page.fill('[id="f-Name"]', 'Daily');
    await page.click('#definition-save');
    await page.waitForURL(/#\/definition\/GLOBAL\.Daily$/);
    const copy = (await get('/JobDefinition/GLOBAL.Daily')).json;
    assert.equal(copy.Script, 'echo "hello $WHO"');
    assert.equal(copy.Priority, 70);
    assert.equal(copy.Description, 'Greets at night');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#definition-actions [data-action="export"]'),
    ]);
    const entries = await readCar(await readFile(await download.path()));
    assert.ok(
      entries.some((e) => e.name === 'JobDefinition/GLOBAL.Daily.xml'),
      entries.map((e) => e.name).join(),
    );

    await page.click('#definition-actions [data-action="delete"]');
    await page.locator('#confirm').filter({ hasText: 'Delete JobDefinition GLOBAL.Daily?' }).waitFor();
    await page.click('#confirm-no');
    assert.equal((await get('/JobDefinition/GLOBAL.Daily')).status, 200, 'kept when not confirmed');
    await page.click('#definition-actions [data-action="delete"]');
    await page.click('#confirm-yes');
    await page.waitForURL(/#\/definitions\?type=JobDefinition$/);
    assert.equal((await get('/JobDefinition/GLOBAL.Daily')).status, 404);
  });

  test('any definition type has its form: a queue is created and edited from the registry declaration', async () => {
    await page.goto(`${ui}/#/definitions?type=Queue`);
    await page.click('#definition-new');
    await page.fill('[id="f-Name"]', 'Night');
    await page.fill('[id="f-Description"]', 'Night work');
    await page.click('#definition-save');
    await page.waitForURL(/#\/object\/Queue\/GLOBAL\.Night$/);
    assert.equal((await get('/Queue/GLOBAL.Night')).json.Description, 'Night work');
    await page.selectOption('[id="f-Held"]', 'true');
    await page.click('#definition-save');
    await page.locator('#diff-table tr[data-field="Held"]').waitFor();
    await page.click('#diff-save');
    await page.locator('.notice').filter({ hasText: 'Saved Queue GLOBAL.Night' }).waitFor();
    assert.equal((await get('/Queue/GLOBAL.Night')).json.Held, true);
  });

  test("a list of records is JSON text; the server's message about an item is shown at the list", async () => {
    const created = await t.req('POST', '/TimeWindow/GLOBAL.Nights', {
      body: { TimeZone: 'UTC', Elements: [{ FromTime: '22:00', UntilTime: '24:00' }] },
    });
    assert.equal(created.status, 201, created.body);
    await page.goto(`${ui}/#/timewindow/GLOBAL.Nights`);
    await page.click('#definition-edit');
    await page.locator('[id="f-Elements"]').waitFor();
    await page.fill('[id="f-Elements"]', '[{"FromTime": "25:00", "UntilTime": "24:00"}]');
    await page.click('#definition-save');
    await page.click('#diff-save');
    await fieldError('Elements').filter({ hasText: 'Field "Elements[0].FromTime"' }).waitFor();
    assert.equal((await get('/TimeWindow/GLOBAL.Nights')).json.Elements[0].FromTime, '22:00');

    await page.fill('[id="f-Elements"]', '[{"FromTime": "21:00", "UntilTime": "24:00"}]');
    await page.click('#definition-save');
    await page.locator('#diff-table tr[data-field="Elements"]').waitFor();
    await page.click('#diff-save');
    await page.locator('.notice').filter({ hasText: 'Saved TimeWindow GLOBAL.Nights' }).waitFor();
    assert.equal((await get('/TimeWindow/GLOBAL.Nights')).json.Elements[0].FromTime, '21:00');
    assert.deepEqual(pageErrors, [], 'no page raised an uncaught error');
  });

  test('a Viewer is offered no edit, copy, delete or new button, and the form is read-only', async () => {
    await t.loginWithGrants('val', 'val-password-123', ['*:*:View']);
    const viewer = await (await browser.newContext()).newPage();
    const dialogs = recordDialogs(viewer);
    await signIn(viewer, ui, 'val', 'val-password-123');
    await viewer.goto(`${ui}/#/definition/GLOBAL.Nightly`);
    await viewer.locator('#definition-actions [data-action="export"]').waitFor();
    assert.equal(await viewer.locator('#definition-actions [data-action="edit"]').count(), 0);
    assert.equal(await viewer.locator('#definition-actions [data-action="copy"]').count(), 0);
    assert.equal(await viewer.locator('#definition-actions [data-action="delete"]').count(), 0);
    await viewer.goto(`${ui}/#/definitions`);
    await viewer.locator('#definitions-body tr[data-key="GLOBAL.Nightly"]').waitFor();
    assert.equal(await viewer.locator('#definition-new').count(), 0);
    await viewer.goto(`${ui}/#/object/JobDefinition/GLOBAL.Nightly`);
    await viewer.locator('[id="f-Script"]').waitFor();
    assert.equal(await viewer.locator('#definition-save').count(), 0);
    assert.equal(await viewer.locator('[id="f-Script"]').isDisabled(), true);
    assert.deepEqual(dialogs, []);
    await viewer.context().close();
  });
});
