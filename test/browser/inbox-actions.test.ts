import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser, screenshot, signIn, startDashboardServer } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.ts';
import { waitFor, waitForJob } from '../helpers/wait.ts';

/**
 * The inbox's hands in a real Chromium: the administrator forwards an approval to bob, who signs in in his own
 * browser and answers it; a replied operator message is deleted from the inbox; a Cleared event is deleted from its
 * definition's page while the Raised one offers no Delete.
 */

const skip = browserSkip();

describe('inbox and event actions in Chromium', { skip }, () => {
  let t: TestServer;
  let browser: Browser;
  let admin: Page;
  let ui: string;
  const get = (path: string) => t.req('GET', path);

  before(async () => {
    ({ t, ui } = await startDashboardServer());
    await t.loginWithGrants('bob', 'bob-password-123', ['*:*:View', 'UserMessage:*:Reply']);
    browser = await launchBrowser();
    admin = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(admin, ui, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('forwards an approval to bob, who then answers it in his inbox', async () => {
    const created = await t.req('POST', '/JobDefinition/Payroll', {
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
    assert.equal(created.status, 201, created.body);
    const job = (await t.req('POST', '/Job/Payroll', { body: {} })).json;
    const id = (await waitForJob(get, job.jobId, ['Console'])).UserMessage;

    await admin.goto(`${ui}/#/inbox`);
    const card = admin.locator(`#inbox-user [data-message="${id}"]`);
    await card.filter({ hasText: 'Release the payroll run?' }).waitFor();
    await card.locator('[data-open-handover]').click();
    await card.locator('input[name=to]').fill('nobody-here');
    await card.locator('button[data-handover=forward]').click();
    await admin.locator('.notice.error').filter({ hasText: 'there is no user nobody-here' }).waitFor();
    assert.deepEqual(
      (await get(`/UserMessage/${id}`)).json.Participants,
      ['admin'],
      'a refused forward changes nothing',
    );
    // Another approval arrives: the inbox is read again, and the open form keeps what was typed.
    const other = (await t.req('POST', '/Job/Payroll', { body: {} })).json;
    const otherId = (await waitForJob(get, other.jobId, ['Console'])).UserMessage;
    await admin.locator(`#inbox-user [data-message="${otherId}"]`).waitFor();
    assert.equal(await card.locator('input[name=to]').inputValue(), 'nobody-here');
    await card.locator('input[name=to]').fill('bob');
    await card.locator('input[name=handover-comment]').fill('I am on leave');
    await card.locator('button[data-handover=forward]').click();
    await card.locator('.handover-history').filter({ hasText: 'admin forwarded to bob: I am on leave' }).waitFor();
    await screenshot(admin, 'inbox-forwarded');
    const forwarded = (await get(`/UserMessage/${id}`)).json;
    assert.deepEqual(forwarded.Participants, ['admin', 'bob']);
    assert.equal(forwarded.History[0].User, 'admin');

    const bob = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(bob, ui, 'bob', 'bob-password-123');
    await bob.goto(`${ui}/#/inbox`);
    const bobsCard = bob.locator(`#inbox-user [data-message="${id}"]`);
    await bobsCard.filter({ hasText: 'Release the payroll run?' }).waitFor();
    await bobsCard.locator('input[name=comment]').fill('released for admin');
    await bobsCard.locator('button[data-response=Approve]').click();
    const done = await waitForJob(get, job.jobId, ['Completed', 'Error']);
    assert.equal(done.Status, 'Completed');
    const answered = (await get(`/UserMessage/${id}`)).json;
    assert.equal(answered.ReplyUser, 'bob');
    assert.equal(answered.ReplyComment, 'released for admin');
    await bobsCard.waitFor({ state: 'detached' });
    await bob.context().close();
  });

  test('deletes a replied operator message from the inbox after confirming', async () => {
    const ask = await t.req('POST', '/Job/System_OperatorMessage', {
      body: {
        JobParameters: [
          { Name: 'Message', InValueString: 'Tape 8 loaded?' },
          { Name: 'ReplyExpression', InValueString: 'Yes|No' },
        ],
      },
    });
    assert.equal(ask.status, 201, ask.body);
    const id = (await waitForJob(get, ask.json.jobId, ['Console'])).OperatorMessage;
    const replied = await t.req('PUT', `/OperatorMessage/${id}/reply`, { body: { Reply: 'Yes' } });
    assert.equal(replied.status, 200, replied.body);

    await admin.goto(`${ui}/#/inbox`);
    const card = admin.locator(`#inbox-answered [data-message="${id}"]`);
    await card.filter({ hasText: 'Tape 8 loaded?' }).filter({ hasText: 'replied by admin' }).waitFor();
    await card.locator(`[data-delete="${id}"]`).click();
    await admin.locator('#confirm-no').click();
    assert.equal((await get(`/OperatorMessage/${id}`)).status, 200, '"Keep it" deletes nothing');
    await card.locator(`[data-delete="${id}"]`).click();
    await admin.locator('#confirm-yes').click();
    await card.waitFor({ state: 'detached' });
    await waitFor('the message is gone', async () =>
      (await get(`/OperatorMessage/${id}`)).status === 404 ? true : undefined,
    );
  });

  test("deletes a Cleared event on its definition's page; the Raised one has no Delete", async () => {
    assert.equal((await t.req('POST', '/EventDefinition/Ledger', { body: {} })).status, 201);
    assert.equal((await t.req('POST', '/Event/Ledger', { body: {} })).status, 201);
    assert.equal((await t.req('POST', '/Event/Ledger1/clear', { body: {} })).status, 200);
    assert.equal((await t.req('POST', '/Event/Ledger', { body: {} })).status, 201);

    await admin.goto(`${ui}/#/eventdefinition/GLOBAL.Ledger`);
    const cleared = admin.locator('#event-list tr[data-event="Ledger1"]');
    const raised = admin.locator('#event-list tr[data-event="Ledger2"]');
    await raised.filter({ hasText: 'Raised' }).waitFor();
    await cleared.filter({ hasText: 'Cleared' }).waitFor();
    assert.equal(await raised.locator('button').count(), 0);
    await cleared.locator('button', { hasText: 'Delete' }).click();
    await admin.locator('#confirm-yes').click();
    await cleared.waitFor({ state: 'detached' });
    assert.equal((await get('/Event/Ledger1')).status, 404);
    assert.equal((await get('/Event/Ledger2')).json.Status, 'Raised');
  });
});
