import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type SmtpSettings, sendMail } from '../../../src/alerts/mail.ts';
import { type SmtpReceiver, startSmtpReceiver } from '../../helpers/smtp-receiver.ts';

describe('alert e-mail over SMTP', () => {
  let smtp: SmtpReceiver;
  let settings: SmtpSettings;
  before(async () => {
    smtp = await startSmtpReceiver();
    settings = { host: smtp.host, port: smtp.port, from: 'millrace@localhost', timeoutMs: 5_000 };
  });
  after(() => smtp.close());

  test('the message arrives with its sender, recipient, subject and text', async () => {
    await sendMail(settings, {
      to: 'oncall@example.org',
      subject: 'Job 42 reached Error',
      text: 'Job 42 (GLOBAL.Nightly) ended in status Error.\n.a line that starts with a dot\nAcknowledge it.',
    });
    const m = smtp.messages.at(-1);
    assert.ok(m);
    assert.equal(m.from, 'millrace@localhost');
    assert.deepEqual(m.to, ['oncall@example.org']);
    assert.equal(m.subject, 'Job 42 reached Error');
    assert.match(m.body, /Job 42 \(GLOBAL\.Nightly\) ended in status Error\./);
    assert.match(m.body, /^\.a line that starts with a dot$/m, 'dot-stuffed on the wire, restored on receipt');
    assert.equal(m.auth, undefined);
  });

  test('a non-ASCII subject survives the trip', async () => {
    await sendMail(settings, { to: 'oncall@example.org', subject: 'Tâche échouée – 42', text: 'x' });
    assert.equal(smtp.messages.at(-1)?.subject, 'Tâche échouée – 42');
  });

  test('credentials from the settings are used', async () => {
    await sendMail(
      { ...settings, user: 'alerts', password: 'p@ss word' },
      { to: 'a@example.org', subject: 's', text: 't' },
    );
    assert.deepEqual(smtp.messages.at(-1)?.auth, { user: 'alerts', password: 'p@ss word' });
  });

  test('a line break in the subject or recipient is refused: no header injection', async () => {
    const count = smtp.messages.length;
    await assert.rejects(
      sendMail(settings, { to: 'oncall@example.org', subject: 'Hi\r\nBcc: victim@example.org', text: 'x' }),
      /subject must not hold a line break/,
    );
    await assert.rejects(
      sendMail(settings, { to: 'oncall@example.org\nBcc: victim@example.org', subject: 'Hi', text: 'x' }),
      /recipient must not hold a line break/,
    );
    assert.equal(smtp.messages.length, count);
  });

  test('a comma in the recipient does not add a second recipient', async () => {
    await sendMail(settings, { to: 'a,b@example.org', subject: 's', text: 't' });
    assert.equal(smtp.messages.at(-1)?.to.length, 1);
  });

  test('an SMTP server that is not there fails the send', async () => {
    const s = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => s.once('listening', r));
    const { port } = s.address() as { port: number };
    await new Promise((r) => s.close(r));
    await assert.rejects(
      sendMail({ ...settings, port }, { to: 'a@example.org', subject: 's', text: 't' }),
      /ECONNREFUSED/,
    );
  });
});
