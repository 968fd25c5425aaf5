import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyWebhookSignature } from '../../../src/alerts/webhook.ts';
import { backends } from '../../helpers/backends.ts';
import { assertError, pause, postCreated as post, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp-receiver.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

/**
 * Alerts with escalation, delivered to real local receivers: a webhook
 * receiver that checks the signature and an SMTP server. An Error job raises an alert through a
 * JobDefinitionAlertSource; nobody acknowledges it, so it escalates after AcknowledgeWithin; once acknowledged it
 * escalates no further.
 */

const SECRET = 'test-webhook-secret-0123456789';

const deliveredAlertId = async (hook: WebhookReceiver, n = 1): Promise<number> => {
  const d = await waitFor(`webhook delivery ${n}`, async () => hook.deliveries[n - 1]);
  return (d.json as { alertId: number }).alertId;
};

for (const backend of backends()) {
  describe(`Alerts and escalation (${backend.name})`, () => {
    let t: TestServer;
    let oncall: WebhookReceiver;
    let directors: WebhookReceiver;
    let slow: WebhookReceiver;
    let servers: WebhookReceiver;
    let smtp: SmtpReceiver;

    before(async () => {
      [oncall, directors, slow, servers, smtp] = await Promise.all([
        startWebhookReceiver(),
        startWebhookReceiver(),
        startWebhookReceiver(),
        startWebhookReceiver(),
        startSmtpReceiver(),
      ]);
      t = await startTestServer(backend, {
        webhookAllow: ['127.0.0.1'],
        webhookSecret: SECRET,
        smtp: { host: '127.0.0.1', port: smtp.port, from: 'millrace@test.local' },
      });
      await post(t, '/AlertEscalation/GLOBAL.Directors', { Recipients: [{ Kind: 'Webhook', Address: directors.url }] });
      // Five seconds for the test to acknowledge what Managers got before it moves on: a loaded machine has time.
      await post(t, '/AlertEscalation/GLOBAL.Managers', {
        Recipients: [{ Kind: 'Email', Address: 'boss@example.com' }],
        AcknowledgeWithin: 5,
        EscalateTo: 'GLOBAL.Directors',
      });
      await post(t, '/AlertEscalation/GLOBAL.Oncall', {
        Recipients: [{ Kind: 'Webhook', Address: oncall.url }],
        AcknowledgeWithin: 1,
        EscalateTo: 'GLOBAL.Managers',
      });
      await post(t, '/AlertEscalation/GLOBAL.Slow', { Recipients: [{ Kind: 'Webhook', Address: slow.url }] });
      await post(t, '/AlertEscalation/GLOBAL.Servers', { Recipients: [{ Kind: 'Webhook', Address: servers.url }] });
      // A System definition the server does not know ends Error at once.
      await post(t, '/JobDefinition/GLOBAL.FailNow', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobDefinitionAlertSource/GLOBAL.Failures', {
        NamePattern: 'Fail*',
        Statuses: [{ Status: 'Error' }],
        DefaultAlertEscalation: 'GLOBAL.Oncall',
      });
    });
    after(async () => {
      await t.close();
      await Promise.all([oncall, directors, slow, servers, smtp].map((r) => r.close()));
    });

    test('an Error job raises an alert; unacknowledged it escalates; acknowledged it stops', async () => {
      const job = await submit(t, 'GLOBAL.FailNow');
      await waitForStatus(t, job.jobId, 'Error');
      const alertId = await deliveredAlertId(oncall);
      const delivery = oncall.deliveries[0];
      assert.ok(delivery);
      assert.ok(
        verifyWebhookSignature(
          SECRET,
          String(delivery.headers['x-millrace-timestamp']),
          delivery.body,
          String(delivery.headers['x-millrace-signature']),
        ),
        'the webhook is signed with the configured secret',
      );
      assert.equal((delivery.json as { SourceObject: string }).SourceObject, `Job:${job.jobId}`);
      const alert = (await t.req('GET', `/Alert/${alertId}`)).json;
      assert.equal(alert.Status, 'NotAcknowledged');
      assert.equal(alert.AlertSource, 'JobDefinitionAlertSource:GLOBAL.Failures');
      assert.equal(alert.AlertEscalation, 'GLOBAL.Oncall');
      assert.match(alert.Message, new RegExp(`Job:${job.jobId} \\(GLOBAL.FailNow\\) went from \\w+ to Error`));
      const message = (await t.req('GET', `/OperatorMessage/${alert.OperatorMessage}`)).json;
      assert.equal(message.SenderObject, `Alert:${alertId}`);
      assert.equal(message.ReplyStatus, 'Required');

      // AcknowledgeWithin 1 s: the alert moves to Managers, whose recipient gets a mail.
      const mail = await waitFor('escalation mail', async () => smtp.messages[0]);
      assert.deepEqual(mail.to, ['boss@example.com']);
      assert.match(mail.subject, new RegExp(`alert ${alertId}`));
      const escalated = (await t.req('GET', `/Alert/${alertId}`)).json;
      assert.equal(escalated.Status, 'Escalated');
      assert.equal(escalated.AlertEscalation, 'GLOBAL.Managers');

      assertError(
        await t.req('PUT', `/Alert/${alertId}/reply`, { body: { Response: 'Whatever' } }),
        400,
        /does not match/,
      );
      const ack = await t.req('PUT', `/Alert/${alertId}/reply`, { body: { Response: 'Acknowledge' } });
      assert.equal(ack.status, 200, ack.body);
      assert.equal(ack.json.Status, 'Acknowledged');
      assert.equal(ack.json.ReplyUser, 'admin');
      assert.equal(ack.json.EscalationTime, null);
      assert.equal((await t.req('GET', `/OperatorMessage/${alert.OperatorMessage}`)).json.ReplyStatus, 'Replied');
      // Managers would have escalated to Directors 5 s after the mail: acknowledged, it does not.
      await pause(6000);
      assert.equal(directors.deliveries.length, 0, 'no escalation after the acknowledgement');
      assert.equal(oncall.deliveries.length, 1);
      assert.equal(smtp.messages.length, 1);
      assertError(
        await t.req('PUT', `/Alert/${alertId}/reply`, { body: { Response: 'Acknowledge' } }),
        409,
        /Acknowledged already/,
      );
    });

    test('bad alert replies: unknown alert 404, unknown field or wrong type 400, no Reply privilege 403; nothing changes', async () => {
      const before = oncall.deliveries.length;
      await submit(t, 'GLOBAL.FailNow');
      const alertId = await deliveredAlertId(oncall, before + 1);
      const reply = (body: unknown, key?: string) =>
        t.req('PUT', `/Alert/${alertId}/reply`, { body, ...(key ? { key } : {}) });
      assertError(
        await t.req('PUT', '/Alert/987654/reply', { body: { Response: 'Acknowledge' } }),
        404,
        /Alert:987654/,
      );
      assertError(await reply({ Response: 'Acknowledge', Reply: 'x' }), 400, /Unknown field "Reply"/);
      assertError(await reply({ Response: 7 }), 400, /"Response" must be a string/);
      assertError(await reply({ Response: '  ' }), 400, /must not be empty/);
      const viewer = await t.keyWithGrants('alert-reader', ['Alert:GLOBAL:View']);
      assertError(await reply({ Response: 'Acknowledge' }, viewer), 403, /Reply privilege/);
      const stranger = await t.keyWithGrants('alert-stranger', ['Queue:GLOBAL:View']);
      assertError(await t.req('GET', `/Alert/${alertId}`, { key: stranger }), 404, /Alert/);
      assert.equal((await t.req('GET', `/Alert/${alertId}`)).json.Status, 'NotAcknowledged');
      assertError(await reply({ Response: 'acknowledge' }), 400, /does not match the reply expression Acknowledge/);
      assert.equal((await reply({ Response: ' Acknowledge ' })).json.Status, 'Acknowledged');
    });

    test("replying Acknowledge to the alert's operator message acknowledges the alert", async () => {
      const before = oncall.deliveries.length;
      await submit(t, 'GLOBAL.FailNow');
      const alertId = await deliveredAlertId(oncall, before + 1);
      const { OperatorMessage } = (await t.req('GET', `/Alert/${alertId}`)).json;
      const res = await t.req('PUT', `/OperatorMessage/${OperatorMessage}/reply`, { body: { Reply: 'Acknowledge' } });
      assert.equal(res.status, 200, res.body);
      assert.equal((await t.req('GET', `/Alert/${alertId}`)).json.Status, 'Acknowledged');
    });

    test('a delayed status alerts only for jobs still in it after the delay', async () => {
      await post(t, '/JobDefinition/GLOBAL.AskSlow', {
        JobDefinitionType: 'UserMessage',
        DefaultQueue: 'GLOBAL.System',
        UserMessage: { Text: 'ok?', Responses: [{ Response: 'Ok' }], Participants: ['admin'] },
      });
      await post(t, '/JobDefinitionAlertSource/GLOBAL.Unanswered', {
        NamePattern: 'AskSlow',
        Statuses: [
          // Five seconds to answer one of the two before the delay is up, however loaded the machine.
          { Status: 'Console', DelayAmount: 5, DelayUnits: 'Seconds', Message: 'Job ${jobid} waits for an answer' },
        ],
        DefaultAlertEscalation: 'GLOBAL.Slow',
      });
      const answered = await submit(t, 'GLOBAL.AskSlow');
      const left = await submit(t, 'GLOBAL.AskSlow');
      const a = await waitForStatus(t, answered.jobId, 'Console');
      await waitForStatus(t, left.jobId, 'Console');
      assert.equal(
        (await t.req('PUT', `/UserMessage/${a.UserMessage}/reply`, { body: { Response: 'Ok' } })).status,
        200,
      );
      const alertId = await deliveredAlertId(slow);
      assert.equal((await t.req('GET', `/Alert/${alertId}`)).json.Message, `Job ${left.jobId} waits for an answer`);
      await pause(500);
      assert.equal(slow.deliveries.length, 1, 'the answered job raised none');
    });

    test('disable and enable a source (Control privilege); a disabled source raises nothing', async () => {
      assertError(await t.req('PUT', '/JobDefinitionAlertSource/GLOBAL.Nope/disable'), 404, /JobDefinitionAlertSource/);
      const viewer = await t.keyWithGrants('alert-viewer', ['JobDefinitionAlertSource:GLOBAL:View']);
      assertError(
        await t.req('PUT', '/JobDefinitionAlertSource/GLOBAL.Failures/disable', { key: viewer }),
        403,
        /Control privilege/,
      );
      const off = await t.req('PUT', '/JobDefinitionAlertSource/Failures/disable'); // a bare name means GLOBAL
      assert.equal(off.status, 200, off.body);
      assert.equal(off.json.Enabled, false);
      assert.equal(off.json.businessKey, 'JobDefinitionAlertSource:GLOBAL.Failures');
      assert.equal(off.json.NamePattern, 'Fail*', 'the answer is the source itself');
      assert.equal((await t.req('GET', '/JobDefinitionAlertSource/GLOBAL.Failures')).json.Enabled, false);
      const before = oncall.deliveries.length;
      const job = await submit(t, 'GLOBAL.FailNow');
      await waitForStatus(t, job.jobId, 'Error');
      await pause(500);
      assert.equal(oncall.deliveries.length, before, 'disabled: no alert');
      assert.equal((await t.req('PUT', '/JobDefinitionAlertSource/GLOBAL.Failures/enable')).json.Enabled, true);
      await submit(t, 'GLOBAL.FailNow');
      await deliveredAlertId(oncall, before + 1);
    });

    test('a pending escalation survives a server restart', async () => {
      await post(t, '/AlertEscalation/GLOBAL.AfterRestart', {
        Recipients: [{ Kind: 'Email', Address: 'first@example.com' }],
        // Ten seconds: the restart below comes before the escalation is due, even on a loaded machine.
        AcknowledgeWithin: 10,
        EscalateTo: 'GLOBAL.Directors',
      });
      await post(t, '/JobDefinition/GLOBAL.FailLater', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobDefinitionAlertSource/GLOBAL.LaterFailures', {
        NamePattern: 'FailLater',
        Statuses: [{ Status: 'Error' }],
        DefaultAlertEscalation: 'GLOBAL.AfterRestart',
      });
      const mails = smtp.messages.length;
      const job = await submit(t, 'GLOBAL.FailLater');
      await waitForStatus(t, job.jobId, 'Error');
      await waitFor('the first mail', async () => smtp.messages[mails]);
      await t.restart();
      const about = (d: { json: unknown }) => (d.json as { SourceObject: string }).SourceObject === `Job:${job.jobId}`;
      assert.equal(directors.deliveries.filter(about).length, 0);
      await waitFor('the escalation after the restart', async () => directors.deliveries.find(about));
    });

    test('a failed delivery is tried again with backoff, with the same delivery id', async () => {
      const flaky = await startWebhookReceiver({ status: (n) => (n === 1 ? 500 : 204) });
      try {
        await post(t, '/AlertEscalation/GLOBAL.Flaky', { Recipients: [{ Kind: 'Webhook', Address: flaky.url }] });
        await post(t, '/JobDefinition/GLOBAL.FailFlaky', {
          JobDefinitionType: 'System',
          DefaultQueue: 'GLOBAL.System',
        });
        await post(t, '/JobDefinitionAlertSource/GLOBAL.FlakyFailures', {
          NamePattern: 'FailFlaky',
          Statuses: [{ Status: 'Error' }],
          DefaultAlertEscalation: 'GLOBAL.Flaky',
        });
        await submit(t, 'GLOBAL.FailFlaky');
        const [first, second] = [
          await waitFor('the first attempt', async () => flaky.deliveries[0]),
          await waitFor('the retry (5 s later)', async () => flaky.deliveries[1]),
        ];
        assert.equal(first.status, 500);
        const id = (d: { json: unknown }) => (d.json as { deliveryId: number }).deliveryId;
        assert.equal(id(second), id(first));
        await pause(300);
        assert.equal(flaky.deliveries.length, 2, 'delivered once it succeeded');
      } finally {
        await flaky.close();
      }
    });

    test('an alert source with a reply expression that is not a regular expression is refused', async () => {
      const res = await t.req('POST', '/ProcessServerAlertSource/GLOBAL.BadReply', {
        body: { Statuses: ['Unknown'], ReplyExpression: '(oops' },
      });
      assertError(res, 400, /"ReplyExpression": "\(oops" is not a valid regular expression/);
      assert.equal((await t.req('GET', '/ProcessServerAlertSource/GLOBAL.BadReply')).status, 404);
    });

    test('a process server that is stopped raises a ProcessServerAlertSource alert', async () => {
      await post(t, '/ProcessServer/GLOBAL.RemoteBox', { DefinitionTypes: ['BASH'] });
      await post(t, '/ProcessServerAlertSource/GLOBAL.ServersDown', {
        NamePattern: 'Remote*',
        Statuses: ['Shutdown'],
        OperatorMessageExpression: '${processServer} went from ${oldStatus} to ${newStatus}',
        ReplyExpression: 'Acknowledge|Later',
        DefaultAlertEscalation: 'GLOBAL.Servers',
      });
      assert.equal((await t.req('PUT', '/ProcessServer/GLOBAL.RemoteBox/stop')).status, 200);
      const alertId = await deliveredAlertId(servers);
      const alert = (await t.req('GET', `/Alert/${alertId}`)).json;
      assert.match(alert.Message, /^GLOBAL\.RemoteBox went from \w+ to Shutdown$/);
      assert.equal(alert.SourceObject, 'ProcessServer:GLOBAL.RemoteBox');
      assert.equal(alert.AlertSource, 'ProcessServerAlertSource:GLOBAL.ServersDown');
      const later = await t.req('PUT', `/Alert/${alertId}/reply`, { body: { Response: 'Later' } });
      assert.equal(later.json.Status, 'Replied', 'an accepted reply other than Acknowledge');
      assert.equal(later.json.Reply, 'Later');
      assert.equal((await t.req('PUT', '/ProcessServerAlertSource/GLOBAL.ServersDown/disable')).json.Enabled, false);
    });
  });
}
