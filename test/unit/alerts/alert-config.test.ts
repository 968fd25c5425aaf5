import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULTS, loadConfig } from '../../../src/config/config.ts';

test('without settings: no allow-list, no secret, no SMTP', () => {
  const c = loadConfig({}, {});
  assert.deepEqual(c.webhookAllow, []);
  assert.deepEqual(DEFAULTS.webhookAllow, []);
  assert.equal(c.webhookSecret, undefined);
  assert.equal(c.smtp, undefined);
});

test('MILLRACE_WEBHOOK_ALLOW is a comma-separated list of hosts, addresses and ranges', () => {
  const c = loadConfig({}, { MILLRACE_WEBHOOK_ALLOW: ' 127.0.0.1, hooks.internal ,,10.0.0.0/8,::1/128' });
  assert.deepEqual(c.webhookAllow, ['127.0.0.1', 'hooks.internal', '10.0.0.0/8', '::1/128']);
  assert.throws(
    () => loadConfig({}, { MILLRACE_WEBHOOK_ALLOW: '10.0.0.0/8,*.internal' }),
    /invalid MILLRACE_WEBHOOK_ALLOW: "\*\.internal" is not a host name/,
  );
});

test('MILLRACE_WEBHOOK_SECRET must not be short', () => {
  assert.equal(
    loadConfig({}, { MILLRACE_WEBHOOK_SECRET: 'a-long-enough-secret' }).webhookSecret,
    'a-long-enough-secret',
  );
  assert.throws(() => loadConfig({}, { MILLRACE_WEBHOOK_SECRET: 'short' }), /MILLRACE_WEBHOOK_SECRET: at least 16/);
});

test('MILLRACE_SMTP_URL and MILLRACE_MAIL_FROM', () => {
  assert.deepEqual(loadConfig({}, { MILLRACE_SMTP_URL: 'smtp://alerts:p%40ss@mail.example:2525' }).smtp, {
    host: 'mail.example',
    port: 2525,
    secure: false,
    user: 'alerts',
    password: 'p@ss',
    from: 'millrace@localhost',
  });
  assert.deepEqual(
    loadConfig({}, { MILLRACE_SMTP_URL: 'smtps://mail.example', MILLRACE_MAIL_FROM: 'Millrace <ops@example.org>' })
      .smtp,
    { host: 'mail.example', port: 465, secure: true, from: 'Millrace <ops@example.org>' },
  );
  assert.equal(loadConfig({}, { MILLRACE_SMTP_URL: 'smtp://mail.example' }).smtp?.port, 25);
});

test('a bad SMTP setting is refused without echoing the password', () => {
  for (const url of ['http://u:hunter2@mail.example', 'smtp://u:hunter2@', 'not a url hunter2'])
    assert.throws(
      () => loadConfig({}, { MILLRACE_SMTP_URL: url }),
      (e: Error) => /invalid MILLRACE_SMTP_URL/.test(e.message) && !e.message.includes('hunter2'),
    );
  for (const from of ['ops@example.org\r\nBcc: x@evil.example', 'no-at-sign', 'a@b@c'])
    assert.throws(
      () => loadConfig({}, { MILLRACE_SMTP_URL: 'smtp://mail.example', MILLRACE_MAIL_FROM: from }),
      /MILLRACE_MAIL_FROM/,
    );
});
