import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  loadWebhookSecret,
  MAX_DELIVERY_ATTEMPTS,
  retryDelayMs,
  signWebhook,
  verifyWebhookSignature,
} from '../../../src/alerts/webhook.ts';

test('the signature is sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">', () => {
  const expected = createHmac('sha256', 'k'.repeat(32)).update('1700000000.{"a":1}').digest('hex');
  assert.equal(signWebhook('k'.repeat(32), 1700000000, '{"a":1}'), `sha256=${expected}`);
});

test('a receiver accepts the signature and refuses any change', () => {
  const secret = 'receiver-shared-secret';
  const body = '{"alert":"Job 12 failed"}';
  const header = signWebhook(secret, '1700000000', body);
  assert.equal(verifyWebhookSignature(secret, '1700000000', body, header), true);
  assert.equal(verifyWebhookSignature(secret, 1700000000, body, header), true);
  assert.equal(verifyWebhookSignature(secret, '1700000001', body, header), false, 'other timestamp');
  assert.equal(verifyWebhookSignature(secret, '1700000000', `${body} `, header), false, 'other body');
  assert.equal(verifyWebhookSignature('other-secret', '1700000000', body, header), false, 'other secret');
  for (const bad of [undefined, '', 'sha256=', header.slice(0, -1), `${header}0`, header.toUpperCase()])
    assert.equal(verifyWebhookSignature(secret, '1700000000', body, bad), false, String(bad));
  assert.equal(verifyWebhookSignature(secret, 'x', body, header), false, 'a timestamp that is not a number');
});

test('with maxAgeSeconds an old timestamp is refused (replay)', () => {
  const now = Math.floor(Date.now() / 1000);
  const body = '{}';
  assert.equal(verifyWebhookSignature('s', now, body, signWebhook('s', now, body), 300), true);
  const old = now - 3600;
  assert.equal(verifyWebhookSignature('s', old, body, signWebhook('s', old, body), 300), false);
});

test('retry delays grow and stay capped; attempts are bounded', () => {
  const delays = Array.from({ length: MAX_DELIVERY_ATTEMPTS }, (_, i) => retryDelayMs(i + 1));
  assert.deepEqual(delays.slice(0, 5), [5_000, 30_000, 120_000, 600_000, 1_800_000]);
  for (let i = 1; i < delays.length; i++) assert.ok((delays[i] as number) >= (delays[i - 1] as number));
  assert.equal(retryDelayMs(100), 1_800_000);
  assert.equal(retryDelayMs(0), 5_000);
  assert.equal(MAX_DELIVERY_ATTEMPTS, 8);
});

test('the webhook secret comes from the environment, or a 0600 file made once in the data folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'millrace-webhook-key-'));
  try {
    assert.equal(loadWebhookSecret(dir, { MILLRACE_WEBHOOK_SECRET: 'from-the-environment' }), 'from-the-environment');
    const first = loadWebhookSecret(dir, {});
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal(statSync(join(dir, 'webhook.key')).mode & 0o777, 0o600);
    assert.equal(loadWebhookSecret(dir, {}), first, 'kept across starts');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
