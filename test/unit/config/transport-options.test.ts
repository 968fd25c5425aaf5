import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config/config.ts';
import { readConfigFile } from '../../../src/config/file.ts';
import { proxyTrust } from '../../../src/http/client-address.ts';

test('the TLS files come from flags, the environment or the file, made absolute; none means plain HTTP', async () => {
  assert.equal(loadConfig({}, {}).tls, undefined);
  assert.deepEqual(loadConfig({}, {}).trustProxy, []);
  const c = loadConfig(
    { tlsCert: '/etc/m/cert.pem', tlsKey: '/etc/m/key.pem' },
    { MILLRACE_TLS_CLIENT_CA: '/etc/m/ca.pem' },
  );
  assert.deepEqual(c.tls, { cert: '/etc/m/cert.pem', key: '/etc/m/key.pem', clientCa: '/etc/m/ca.pem' });
  const dir = mkdtempSync(join(tmpdir(), 'millrace-tls-config-'));
  try {
    const path = join(dir, 'millrace.toml');
    writeFileSync(
      path,
      '[serve]\ntls-cert = "cert.pem"\ntls-key = "key.pem"\ntrust-proxy = ["10.0.0.0/8", "::1"]\n\n' +
        '[agent]\nca-file = "ca.pem"\ntls-cert = "agent.pem"\ntls-key = "agent.key"\n',
    );
    const fromFile = loadConfig({}, {}, await readConfigFile(path, 'serve'));
    assert.equal(fromFile.tls?.cert, join(process.cwd(), 'cert.pem'));
    assert.deepEqual(fromFile.trustProxy, ['10.0.0.0/8', '::1']);
    const agent = await readConfigFile(path, 'agent');
    assert.deepEqual([...agent.values.keys()], ['ca-file', 'tls-cert', 'tls-key']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('half a TLS setting, or a proxy entry that is no address, stops the start naming it', () => {
  assert.throws(
    () => loadConfig({ tlsCert: 'c.pem' }, {}),
    /--tls-cert is given alone: --tls-cert and --tls-key go together/,
  );
  assert.throws(() => loadConfig({}, { MILLRACE_TLS_KEY: 'k.pem' }), /MILLRACE_TLS_KEY is given alone/);
  assert.throws(() => loadConfig({ tlsClientCa: 'ca.pem' }, {}), /--tls-client-ca needs --tls-cert and --tls-key/);
  assert.throws(
    () => loadConfig({ trustProxy: '10.0.0.1,proxy.example.com' }, {}),
    /invalid --trust-proxy: "proxy.example.com" is not an IP address or a CIDR range/,
  );
  assert.throws(() => loadConfig({ trustProxy: '10.0.0.0/33' }, {}), /invalid --trust-proxy/);
});

test('a trusted proxy is matched by address or range, IPv4 seen as IPv6-mapped included', () => {
  const trusts = proxyTrust(['10.1.0.0/16', '192.0.2.7', 'fd00::/8']);
  assert.ok(trusts);
  assert.equal(trusts('10.1.200.3'), true);
  assert.equal(trusts('::ffff:10.1.2.3'), true);
  assert.equal(trusts('10.2.0.1'), false);
  assert.equal(trusts('192.0.2.7'), true);
  assert.equal(trusts('192.0.2.8'), false);
  assert.equal(trusts('fd12::1'), true);
  assert.equal(trusts('fe80::1'), false);
  assert.equal(trusts('not an address'), false);
  assert.equal(proxyTrust([]), undefined, 'no proxy: X-Forwarded-For is never read');
});
