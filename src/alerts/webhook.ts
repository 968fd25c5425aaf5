import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { type RequestOptions, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import { type LookupAll, resolveWebhookTarget } from './ssrf.ts';
import { itemAt } from '../domain/item-at.ts';
import { errorCode } from '../errors.ts';

/**
 * Webhook delivery. Each POST carries a JSON body and two headers that let the receiver check it came from this
 * server and is fresh:
 *
 *   X-Millrace-Timestamp: <unix seconds>
 *   X-Millrace-Signature: sha256=<hex HMAC-SHA256 over "<timestamp>.<raw body>", keyed with the webhook secret>
 *
 * Signing the timestamp with the body stops a captured delivery from being replayed later under a new timestamp.
 * One call is one attempt: the outbox retries with `retryDelayMs`.
 */

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

/** Delays after the 1st, 2nd, … failed attempt; the last one repeats until MAX_DELIVERY_ATTEMPTS. */
const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000];
export const MAX_DELIVERY_ATTEMPTS = 8;

/** How long to wait before the next attempt, after `attempt` (1-based) attempts failed. */
export function retryDelayMs(attempt: number): number {
  const i = Math.min(Math.max(Math.floor(attempt), 1), RETRY_DELAYS_MS.length) - 1;
  return itemAt(RETRY_DELAYS_MS, i);
}

export function signWebhook(secret: string, timestamp: string | number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * For receivers: whether `header` (X-Millrace-Signature) signs `body` at `timestamp` (X-Millrace-Timestamp).
 * With `maxAgeSeconds`, a timestamp further than that from now is refused too (replay protection).
 */
export function verifyWebhookSignature(
  secret: string,
  timestamp: string | number,
  body: string,
  header: string | undefined,
  maxAgeSeconds?: number,
): boolean {
  if (typeof header !== 'string' || !/^\d{1,12}$/.test(String(timestamp))) return false;
  if (maxAgeSeconds !== undefined && Math.abs(Date.now() / 1000 - Number(timestamp)) > maxAgeSeconds) return false;
  // Digests have one length, so the comparison takes the same time whatever the header holds.
  return timingSafeEqual(digest(signWebhook(secret, timestamp, body)), digest(header));
}

/** MILLRACE_WEBHOOK_SECRET, or `<data>/webhook.key`, created with mode 0600 on first use. */
export function loadWebhookSecret(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.MILLRACE_WEBHOOK_SECRET) return env.MILLRACE_WEBHOOK_SECRET;
  const file = join(dataDir, 'webhook.key');
  try {
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  } catch (e) {
    if (errorCode(e) !== 'EEXIST') throw e;
  }
  const secret = readFileSync(file, 'utf8').trim();
  if (secret === '') throw new Error(`${file} is empty; delete it to have a new webhook secret generated`);
  return secret;
}

export interface WebhookPost {
  url: string;
  body: unknown;
  secret: string;
  allow: readonly string[];
  timeoutMs?: number;
  lookup?: LookupAll;
}

/**
 * One delivery attempt. The target is checked again now (DNS may have changed since the definition) and the
 * connection goes to exactly the checked address; Host and TLS SNI keep the name. Resolves on a 2xx answer,
 * throws an Error with a short reason otherwise. Redirects are not followed: one could lead anywhere.
 */
export async function postWebhook(opts: WebhookPost): Promise<void> {
  const target = await resolveWebhookTarget(opts.url, opts.allow, opts.lookup);
  if ('problem' in target) throw new Error(target.problem);
  const u = new URL(opts.url);
  const where = `Webhook ${u.origin}${u.pathname}`;
  const payload = JSON.stringify(opts.body ?? null);
  const timestamp = Math.floor(Date.now() / 1000);
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const options: RequestOptions = {
    method: 'POST',
    host: u.hostname.replace(/^\[|\]$/g, ''),
    ...(u.port ? { port: Number(u.port) } : {}),
    path: `${u.pathname}${u.search}`,
    headers: {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(payload),
      'User-Agent': 'Millrace',
      'X-Millrace-Timestamp': String(timestamp),
      'X-Millrace-Signature': signWebhook(opts.secret, timestamp, payload),
    },
    lookup: pinned,
    // A pooled socket may have been opened to another address of the same name.
    agent: false,
  };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res) => {
      const status = res.statusCode ?? 0;
      res.on('end', () => clearTimeout(timer));
      res.on('error', () => {}); // a body cut short no longer matters
      res.resume();
      if (status >= 200 && status < 300) resolve();
      else if (status >= 300 && status < 400)
        reject(new Error(`${where} answered ${status}; redirects are not followed`));
      else reject(new Error(`${where} answered ${status}`));
    });
    // Covers connecting, the answer's headers and draining its body; a late body is cut off, not waited for.
    const timer = setTimeout(
      () => req.destroy(new Error(`${where} did not answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(e.message.startsWith(where) ? e : new Error(`${where} could not be reached (${e.code ?? e.message})`));
    });
    req.end(payload);
  });
}
