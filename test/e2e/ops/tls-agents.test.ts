import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { cliEnv, ROOT } from '../../helpers/cli.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, basicAuth, startTestServer, type TestServer } from '../../helpers/server.ts';
import { type CertFiles, httpsRequest, makeCa, makeLeaf } from '../../helpers/tls.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/**
 * `serve` over HTTPS with mutual TLS for agents (docs/architecture.md §10): both interfaces answer over HTTPS and
 * not over plain HTTP, the local agent runs jobs through it, a remote agent verifies the server's certificate
 * against its --ca-file and refuses one of another CA, and only an agent holding a client certificate of the
 * agents' CA is let in. Transport only: one backend.
 */
const SECRET = 'remote-secret-0123456789';

const sqlite = backends().find((b) => b.name === 'sqlite');

describe('HTTPS and mutual TLS for agents', { skip: sqlite ? false : 'no SQLite backend' }, () => {
  let t: TestServer;
  let dir = '';
  let ca: CertFiles;
  let otherCa: CertFiles;
  let agentCert: CertFiles;
  let strangerCert: CertFiles;
  let serverCert: CertFiles;
  let root = '';
  const agents: ChildProcess[] = [];
  const get = (path: string) => t.req('GET', path);

  /** A real `millrace agent` for GLOBAL.Remote with these TLS flags; its log is kept. */
  const spawnRemote = (name: string, tlsArgs: string[]) => {
    const secretFile = join(dir, `${name}.secret`);
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [
        'bin/millrace',
        'agent',
        '--server',
        root,
        '--process-server',
        'GLOBAL.Remote',
        '--secret-file',
        secretFile,
        '--data',
        join(dir, `${name}-agent`),
        ...tlsArgs,
      ],
      { cwd: ROOT, env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    agents.push(child);
    let log = '';
    child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    return { child, log: () => log };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'millrace-tls-'));
    ca = makeCa(dir, 'ca');
    otherCa = makeCa(dir, 'other-ca');
    const server = makeLeaf(dir, ca, 'server');
    serverCert = server;
    agentCert = makeLeaf(dir, ca, 'agent', 'client');
    strangerCert = makeLeaf(dir, otherCa, 'stranger', 'client');
    assert.ok(sqlite);
    t = await startTestServer(
      sqlite,
      { tls: { cert: server.cert, key: server.key, clientCa: ca.cert } },
      { listen: true },
    );
    const { port } = t.server.app.server.address() as { port: number };
    root = `https://127.0.0.1:${port}/millrace`;
    const setup: Array<[string, unknown]> = [
      ['/ProcessServer/GLOBAL.Remote', { DefinitionTypes: ['BASH'], AgentSecret: SECRET, AgentTimeout: 30 }],
      ['/Queue/GLOBAL.RemoteQ', {}],
      ['/QueueProvider/GLOBAL.Remote.GLOBAL.RemoteQ', {}],
      [
        '/JobDefinition/GLOBAL.Remote_Echo',
        { JobDefinitionType: 'BASH', Script: 'echo remote', DefaultQueue: 'GLOBAL.RemoteQ' },
      ],
      ['/JobDefinition/GLOBAL.Local_Echo', { JobDefinitionType: 'BASH', Script: 'echo local' }],
    ];
    for (const [path, body] of setup) assert.equal((await t.req('POST', path, { body })).status, 201, path);
  });

  after(async () => {
    for (const a of agents) a.kill('SIGKILL');
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('both interfaces answer over HTTPS with the certificate of the test CA, and plain HTTP gets no answer', async () => {
    const json = await httpsRequest(
      `${root}/api-extension/External/Vendor/Vendor_RestService/rest/v1/Partition/GLOBAL`,
      ca.cert,
      {
        headers: { 'X-API-Key': ADMIN_KEY },
      },
    );
    assert.equal(json.status, 200, json.body);
    assert.equal(JSON.parse(json.body).Name, 'GLOBAL');
    const xml = await httpsRequest(`${root}/api-rest/object/Partition/GLOBAL`, ca.cert, {
      headers: { Authorization: basicAuth('admin', ADMIN_PASSWORD) },
    });
    assert.equal(xml.status, 200, xml.body);
    assert.match(xml.body, /<name>GLOBAL<\/name>/i);
    await assert.rejects(httpsRequest(`${root}/ui/`, otherCa.cert), /self-signed certificate in certificate chain/);
    const plain = await new Promise<string>((resolve) => {
      const req = httpRequest(root.replace('https:', 'http:'), { agent: false, timeout: 30_000 }, (res) =>
        resolve(`answered ${res.statusCode}`),
      );
      req.on('error', (err) => resolve(`failed: ${err.message}`));
      req.on('timeout', () => req.destroy(new Error('no answer')));
      req.end();
    });
    assert.match(plain, /^failed/, 'a plain HTTP request is not served');
  });

  test('the local agent runs a job over HTTPS under mutual TLS (it presents the server its own certificate)', async () => {
    const id = (await t.req('POST', '/Job/GLOBAL.Local_Echo')).json.jobId;
    const done = await waitForJob(get, id);
    assert.equal(done.Status, 'Completed', JSON.stringify(done.JobNotes));
  });

  test('an agent trusting another CA refuses the server, says why, and keeps trying without a stack trace', async () => {
    const a = spawnRemote('distrustful', [
      '--ca-file',
      otherCa.cert,
      '--tls-cert',
      agentCert.cert,
      '--tls-key',
      agentCert.key,
    ]);
    await waitFor('the refusal in its log', async () =>
      a
        .log()
        .includes(
          "the server's certificate is not trusted (self-signed certificate in certificate chain): give the CA that signed it with --ca-file",
        )
        ? true
        : undefined,
    );
    assert.equal(a.child.exitCode, null, 'it keeps running and retries (an operator may fix the file)');
    assert.doesNotMatch(a.log(), /\n\s+at /, 'no stack trace');
    assert.equal((await get('/ProcessServer/GLOBAL.Remote')).json.Status, 'Connecting');
    a.child.kill('SIGKILL');
  });

  test('an agent without a client certificate, or with one of another CA, is refused', async () => {
    const bare = spawnRemote('bare', ['--ca-file', ca.cert]);
    const stranger = spawnRemote('stranger', [
      '--ca-file',
      ca.cert,
      '--tls-cert',
      strangerCert.cert,
      '--tls-key',
      strangerCert.key,
    ]);
    await waitFor('both refused, as their logs say', async () =>
      bare.log().includes("the server answered 403: a client certificate of the agents' CA is required") &&
      stranger.log().includes("the server answered 403: the client certificate is not one of the agents' CA")
        ? true
        : undefined,
    );
    assert.equal((await get('/ProcessServer/GLOBAL.Remote')).json.Status, 'Connecting');
    bare.child.kill('SIGKILL');
    stranger.child.kill('SIGKILL');
  });

  test("an agent holding the agents' CA's certificate connects over HTTPS and runs a job", async () => {
    spawnRemote('trusted', ['--ca-file', ca.cert, '--tls-cert', agentCert.cert, '--tls-key', agentCert.key]);
    await waitFor('Remote Running', async () =>
      (await get('/ProcessServer/GLOBAL.Remote')).json.Status === 'Running' ? true : undefined,
    );
    const id = (await t.req('POST', '/Job/GLOBAL.Remote_Echo')).json.jobId;
    const done = await waitForJob(get, id);
    assert.equal(done.Status, 'Completed', JSON.stringify(done.JobNotes));
    assert.equal(done.ProcessServer, 'GLOBAL.Remote');
  });

  test('a reload that cannot use the files keeps the current certificate', async () => {
    const partition = `${root}/api-extension/External/Vendor/Vendor_RestService/rest/v1/Partition/GLOBAL`;
    const original = readFileSync(serverCert.cert);
    // Another certificate beside the old key: they do not fit, and nothing changes.
    copyFileSync(makeLeaf(dir, ca, 'renewed').cert, serverCert.cert);
    try {
      assert.throws(() => t.server.reloadTls(), /key values mismatch/);
    } finally {
      writeFileSync(serverCert.cert, original);
    }
    const after = await httpsRequest(partition, ca.cert, { headers: { 'X-API-Key': ADMIN_KEY } });
    assert.equal(after.status, 200);
    assert.equal(after.serial, serverCert.serial);
  });
});
