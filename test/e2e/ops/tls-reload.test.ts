import assert from 'node:assert/strict';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { JSON_BASE, runCli, startServe, suiteDataDir } from '../../helpers/cli.ts';
import { httpsRequest, makeCa, makeLeaf } from '../../helpers/tls.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * `millrace serve --tls-cert --tls-key` as an operator runs it (docs/architecture.md §10): the CLI client reaches it
 * with --ca-file and refuses it without; a certificate swapped in place and SIGHUP are taken by new connections
 * while the local agent stays connected on its own, its running job finishing and the next one running.
 */
const KEY = 'tls-reload-admin-key-0123456789';

describe('serve over HTTPS: the CLI client, and a certificate renewed on SIGHUP', () => {
  const dir = suiteDataDir('tls-reload');

  test('a new certificate on SIGHUP, with the agent connected throughout', async () => {
    const ca = makeCa(dir(), 'ca');
    const first = makeLeaf(dir(), ca, 'first');
    const second = makeLeaf(dir(), ca, 'second');
    const cert = join(dir(), 'server.crt');
    const key = join(dir(), 'server.key');
    copyFileSync(first.cert, cert);
    copyFileSync(first.key, key);
    const serve = await startServe(['--data', join(dir(), 'data'), '--tls-cert', cert, '--tls-key', key], {
      MILLRACE_ADMIN_API_KEY: KEY,
    });
    assert.match(serve.output(), /Millrace serving https:\/\/127\.0\.0\.1:\d+\/millrace\/ui\//);
    const root = `https://127.0.0.1:${serve.port}/millrace`;
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await httpsRequest(`https://127.0.0.1:${serve.port}${JSON_BASE}${path}`, ca.cert, {
        method,
        headers: { 'X-API-Key': KEY, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { ...res, json: res.body ? JSON.parse(res.body) : undefined };
    };
    const status = async (id: number) => (await api('GET', `/Job/${id}`)).json.Status as string;
    const connections = () => serve.output().split('millrace agent: connected').length - 1;

    // The CLI client: with the test CA it works; without, it refuses the certificate in one line.
    const cli = (args: string[]) =>
      runCli(['job', 'list', '--server', root, '-o', 'json', ...args], { MILLRACE_API_KEY: KEY });
    const trusted = await cli(['--ca-file', ca.cert]);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.deepEqual(JSON.parse(trusted.stdout), []);
    const refused = await cli([]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^millrace: GET \/Job\S*: cannot reach \S+: the server's certificate is not trusted \(unable to verify the first certificate\): give the CA that signed it with --ca-file\n$/,
    );

    // A job of the local agent that runs until the test lets it end.
    const go = join(dir(), 'go');
    const script = `while [ ! -f '${go}' ]; do sleep 0.2; done; echo released`;
    assert.equal(
      (await api('POST', '/JobDefinition/GLOBAL.Held', { JobDefinitionType: 'BASH', Script: script })).status,
      201,
    );
    assert.equal(
      (await api('POST', '/JobDefinition/GLOBAL.Next', { JobDefinitionType: 'BASH', Script: 'echo next' })).status,
      201,
    );
    const held = (await api('POST', '/Job/GLOBAL.Held')).json.jobId as number;
    await waitFor('the held job running', async () => ((await status(held)) === 'Running' ? true : undefined));
    assert.equal((await api('GET', '/Partition/GLOBAL')).serial, first.serial);
    const before = connections();
    assert.ok(before >= 1, serve.output());

    copyFileSync(second.cert, cert);
    copyFileSync(second.key, key);
    serve.child.kill('SIGHUP');
    await waitFor('a new connection presenting the second certificate', async () =>
      (await api('GET', '/Partition/GLOBAL')).serial === second.serial ? true : undefined,
    );
    assert.match(serve.output(), /TLS certificate, key and client CA read again/);
    assert.equal(serve.child.exitCode, null, 'the server still runs');

    writeFileSync(go, '');
    await waitFor('the held job ended', async () => ((await status(held)) === 'Running' ? undefined : true));
    assert.equal(await status(held), 'Completed');
    const next = (await api('POST', '/Job/GLOBAL.Next')).json.jobId as number;
    await waitFor('the next job ended', async () =>
      ['Completed', 'Error', 'Unknown'].includes(await status(next)) ? true : undefined,
    );
    assert.equal(await status(next), 'Completed');
    assert.equal(connections(), before, `the agent was not reconnected:\n${serve.output()}`);
    assert.ok(existsSync(go));
    assert.equal(await serve.stop(), 0);
  });
});
