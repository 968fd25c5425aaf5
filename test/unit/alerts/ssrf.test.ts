import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  allowEntryProblem,
  type LookupAll,
  resolveWebhookTarget,
  webhookUrlProblem,
} from '../../../src/alerts/ssrf.ts';

/** A resolver that answers from a table, as a hostile or changed DNS would. */
const fakeDns =
  (table: Record<string, string[]>): LookupAll =>
  async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('webhook URL literals (S15)', () => {
  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1/x', /a loopback address \(127\.0\.0\.1\)/],
    ['http://127.8.9.10/x', /a loopback address/],
    ['http://[::1]/x', /a loopback address \(::1\)/],
    ['http://169.254.169.254/latest/meta-data/', /a link-local address \(169\.254\.169\.254\)/],
    ['http://10.0.0.1/x', /a private address \(10\.0\.0\.1\)/],
    ['http://172.16.0.1/x', /a private address/],
    ['http://172.31.255.255/x', /a private address/],
    ['http://192.168.1.1/x', /a private address/],
    ['http://0.0.0.0/x', /an unspecified address/],
    ['http://[::]/x', /an unspecified address/],
    ['http://100.64.0.1/x', /a carrier-grade NAT address/],
    ['http://224.0.0.1/x', /a multicast address/],
    ['http://255.255.255.255/x', /a broadcast address/],
    ['http://240.0.0.1/x', /a reserved address/],
    ['http://[fc00::1]/x', /a private address/],
    ['http://[fd12:3456::1]/x', /a private address/],
    ['http://[fe80::1]/x', /a link-local address/],
    ['http://[ff02::1]/x', /a multicast address/],
    // IPv4 reached through IPv6 forms
    ['http://[::ffff:127.0.0.1]/x', /a loopback address/],
    ['http://[::ffff:a9fe:a9fe]/x', /a link-local address/],
    ['http://[64:ff9b::a00:1]/x', /a private address/],
    ['http://[2002:7f00:1::]/x', /a loopback address/],
    ['http://[::127.0.0.1]/x', /a reserved address/],
    // Forms WHATWG URL rewrites to 127.0.0.1
    ['http://2130706433/x', /a loopback address \(127\.0\.0\.1\)/],
    ['http://0x7f.1/x', /a loopback address \(127\.0\.0\.1\)/],
    ['http://0177.0.0.1/x', /a loopback address \(127\.0\.0\.1\)/],
    ['http://127.1/x', /a loopback address \(127\.0\.0\.1\)/],
    ['http://0xa9.0xfe.0xa9.0xfe/', /a link-local address \(169\.254\.169\.254\)/],
  ];
  for (const [url, message] of refused)
    test(`${url} is refused`, () => {
      assert.match(webhookUrlProblem(url, []) ?? '', message);
    });

  test('the message names the address, the problem and the way out', () => {
    assert.equal(
      webhookUrlProblem('http://127.0.0.1:9/x', []),
      'Webhook address http://127.0.0.1:9/x points to a loopback address (127.0.0.1); add it to MILLRACE_WEBHOOK_ALLOW to permit it',
    );
  });

  test('public addresses and host names pass the literal check', () => {
    for (const url of [
      'http://93.184.216.34/x',
      'https://[2606:2800:220:1:248:1893:25c8:1946]/x',
      'http://172.32.0.1/',
      'http://100.128.0.1/',
      'https://hooks.example.com/services/x',
    ])
      assert.equal(webhookUrlProblem(url, []), undefined, url);
  });

  test('only http and https', () => {
    for (const url of ['file:///etc/passwd', 'gopher://127.0.0.1:70/_x', 'ftp://example.com/', 'javascript:alert(1)'])
      assert.match(webhookUrlProblem(url, []) ?? '', /uses the \w+: scheme; only http and https are allowed/, url);
    assert.match(webhookUrlProblem('not a url', []) ?? '', /not a valid URL/);
  });

  test('user info is refused and not echoed', () => {
    const problem = webhookUrlProblem('https://user:hunter2@example.com/x', []) ?? '';
    assert.match(problem, /must not hold a user name or password/);
    assert.doesNotMatch(problem, /hunter2/);
  });
});

describe('resolving webhook hosts', () => {
  const dns = fakeDns({
    'internal.example': ['10.0.0.5'],
    'mixed.example': ['93.184.216.34', '192.168.0.10'],
    'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'mapped.example': ['::ffff:127.0.0.1'],
    'metadata.example': ['169.254.169.254'],
  });

  test('a host name resolving to a private address is refused', async () => {
    const r = await resolveWebhookTarget('https://internal.example/hook', [], dns);
    assert.deepEqual(r, {
      problem:
        'Webhook address https://internal.example/hook resolves to a private address (10.0.0.5); add it to MILLRACE_WEBHOOK_ALLOW to permit it',
    });
  });

  test('one internal address among public ones is enough to refuse', async () => {
    const r = await resolveWebhookTarget('https://mixed.example/', [], dns);
    assert.match('problem' in r ? r.problem : '', /a private address \(192\.168\.0\.10\)/);
  });

  test('an IPv4-mapped IPv6 answer is judged as its IPv4 address', async () => {
    const r = await resolveWebhookTarget('https://mapped.example/', [], dns);
    assert.match('problem' in r ? r.problem : '', /a loopback address \(::ffff:127\.0\.0\.1\)/);
    const m = await resolveWebhookTarget('http://metadata.example/', [], dns);
    assert.match('problem' in m ? m.problem : '', /link-local/);
  });

  test('a public host gives the address to connect to', async () => {
    assert.deepEqual(await resolveWebhookTarget('https://public.example/x', [], dns), {
      address: '93.184.216.34',
      family: 4,
    });
  });

  test('an IP literal needs no lookup', async () => {
    const never: LookupAll = async () => assert.fail('no lookup for a literal');
    assert.deepEqual(await resolveWebhookTarget('http://[::1]:8080/', ['::1/128'], never), {
      address: '::1',
      family: 6,
    });
  });

  test('a host that does not resolve is refused', async () => {
    const r = await resolveWebhookTarget('https://nowhere.example/', [], dns);
    assert.match('problem' in r ? r.problem : '', /nowhere\.example could not be resolved \(ENOTFOUND\)/);
  });

  test('scheme problems are found before any lookup', async () => {
    const never: LookupAll = async () => assert.fail('no lookup');
    const r = await resolveWebhookTarget('gopher://internal.example/', [], never);
    assert.match('problem' in r ? r.problem : '', /gopher: scheme/);
  });
});

describe('the allow-list overrides', () => {
  const dns = fakeDns({ 'internal.example': ['10.1.2.3'], 'other.example': ['10.1.2.4'] });

  test('by host name, exact and case-insensitive', async () => {
    assert.deepEqual(await resolveWebhookTarget('http://internal.example/x', ['Internal.Example'], dns), {
      address: '10.1.2.3',
      family: 4,
    });
    assert.ok('problem' in (await resolveWebhookTarget('http://other.example/x', ['internal.example'], dns)));
    assert.ok('problem' in (await resolveWebhookTarget('http://sub.internal.example/x', ['internal.example'], dns)));
  });

  test('by IP address, also in its IPv4-mapped form', () => {
    assert.equal(webhookUrlProblem('http://127.0.0.1:9/x', ['127.0.0.1']), undefined);
    assert.equal(webhookUrlProblem('http://[::ffff:127.0.0.1]:9/x', ['127.0.0.1']), undefined);
    assert.match(webhookUrlProblem('http://127.0.0.2/x', ['127.0.0.1']) ?? '', /loopback/);
  });

  test('by CIDR range, for literals and resolved addresses', async () => {
    assert.equal(webhookUrlProblem('http://127.0.0.1/x', ['127.0.0.1/32']), undefined);
    assert.equal(webhookUrlProblem('http://[::1]/x', ['::1/128']), undefined);
    assert.equal(webhookUrlProblem('http://10.200.0.1/x', ['10.0.0.0/8']), undefined);
    assert.match(webhookUrlProblem('http://10.200.0.1/x', ['10.0.0.0/16']) ?? '', /private/);
    assert.deepEqual(await resolveWebhookTarget('http://other.example/', ['10.1.0.0/16'], dns), {
      address: '10.1.2.4',
      family: 4,
    });
  });

  test('allow-list entries are host names, addresses or ranges', () => {
    for (const ok of ['hooks.internal', 'Hooks.Example.COM', '127.0.0.1', '10.0.0.0/8', '::1/128', 'fd00::/8'])
      assert.equal(allowEntryProblem(ok), undefined, ok);
    for (const bad of ['*.example.com', '10.0.0.0/33', '::1/129', 'a b', 'http://x/', '10.0.0.0/8/1', ''])
      assert.match(allowEntryProblem(bad) ?? '', /not a host name, an IP address or a CIDR range/, bad);
  });
});
