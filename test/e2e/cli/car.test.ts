import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readCar } from '../../../src/car/archive.ts';
import { writeCar } from '../../../src/car/archive-writer.ts';
import { type CliResult, runCli } from '../../helpers/cli.ts';

/**
 * `millrace car keygen | sign | verify` as an operator runs them: a key pair is made, a CAR is signed with it,
 * and verify accepts it only with the matching public key and only while no entry has changed.
 */

function assertExit(res: CliResult, code: number, what: string): void {
  assert.equal(res.code, code, `${what} exited ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

describe('millrace car: keygen, sign, verify', () => {
  let dir = '';
  let car = '';
  let keyId = '';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'millrace-car-cli-'));
    car = join(dir, 'export.car');
    writeFileSync(
      car,
      await writeCar([
        { name: 'META-INF/export-info.xml', data: Buffer.from('<export-info><user>admin</user></export-info>') },
        {
          name: 'JobDefinition/GLOBAL.Load.xml',
          data: Buffer.from('<JobDefinition><Name>Load</Name></JobDefinition>'),
        },
        { name: 'Queue/GLOBAL.Night.xml', data: Buffer.from('<Queue><Name>Night</Name></Queue>') },
      ]),
    );
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('keygen writes a private key readable only by its owner and a public key, and prints the key id', async () => {
    mkdirSync(join(dir, 'trusted'));
    const res = await runCli(['car', 'keygen', join(dir, 'release')]);
    assertExit(res, 0, 'car keygen');
    keyId = /^key id: ([0-9a-f]{32})$/m.exec(res.stdout)?.[1] ?? '';
    assert.ok(keyId, `a key id in:\n${res.stdout}`);
    assert.equal(statSync(join(dir, 'release.key')).mode & 0o777, 0o600);
    assert.match(readFileSync(join(dir, 'release.key'), 'utf8'), /-----BEGIN PRIVATE KEY-----/);
    assert.match(readFileSync(join(dir, 'release.pub'), 'utf8'), /-----BEGIN PUBLIC KEY-----/);
    renameSync(join(dir, 'release.pub'), join(dir, 'trusted', 'release.pub'));

    const again = await runCli(['car', 'keygen', join(dir, 'release')]);
    assertExit(again, 1, 'car keygen over an existing key');
    assert.match(again.stderr, /release\.key exists already; not overwriting it/);
  });

  test('sign signs the CAR in place, and verify accepts it with the trusted key', async () => {
    const signed = await runCli(['car', 'sign', '--key', join(dir, 'release.key'), car]);
    assertExit(signed, 0, 'car sign');
    assert.match(signed.stdout, new RegExp(`with key ${keyId}`));
    const names = (await readCar(readFileSync(car))).map((e) => e.name);
    assert.ok(names.includes('META-INF/SIGNATURE.xml'), names.join(', '));
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file left behind',
    );

    const verified = await runCli(['car', 'verify', '--trusted', join(dir, 'trusted'), car]);
    assertExit(verified, 0, 'car verify');
    assert.equal(verified.stdout.trim(), `signed by ${keyId}`);
    const byFile = await runCli(['car', 'verify', '--trusted', join(dir, 'trusted', 'release.pub'), car]);
    assertExit(byFile, 0, 'car verify with the key file');
  });

  test('sign -o writes another file and leaves the input unsigned', async () => {
    const plain = join(dir, 'plain.car');
    writeFileSync(plain, await writeCar([{ name: 'Queue/GLOBAL.A.xml', data: Buffer.from('<Queue/>') }]));
    const out = join(dir, 'plain-signed.car');
    assertExit(await runCli(['car', 'sign', '--key', join(dir, 'release.key'), plain, '-o', out]), 0, 'car sign -o');
    const unsigned = await runCli(['car', 'verify', '--trusted', join(dir, 'trusted'), plain]);
    assertExit(unsigned, 1, 'car verify of an unsigned CAR');
    assert.match(unsigned.stderr, /is not signed/);
    assertExit(await runCli(['car', 'verify', '--trusted', join(dir, 'trusted'), out]), 0, 'car verify of the -o file');
  });

  test('verify with another key folder refuses the CAR as signed by an untrusted key', async () => {
    const other = join(dir, 'other');
    mkdirSync(other);
    assertExit(await runCli(['car', 'keygen', join(other, 'someone')]), 0, 'car keygen (other)');
    const res = await runCli(['car', 'verify', '--trusted', other, car]);
    assertExit(res, 1, 'car verify with an untrusted key');
    assert.match(res.stderr, new RegExp(`signed by an untrusted key ${keyId}`));
  });

  test('verify refuses a CAR whose entry was changed after signing, naming the entry', async () => {
    const entries = await readCar(readFileSync(car));
    const tampered = entries.map((e) =>
      e.name === 'Queue/GLOBAL.Night.xml' ? { name: e.name, data: Buffer.from('<Queue><Name>Evil</Name></Queue>') } : e,
    );
    const file = join(dir, 'tampered.car');
    writeFileSync(file, await writeCar(tampered));
    const res = await runCli(['car', 'verify', '--trusted', join(dir, 'trusted'), file]);
    assertExit(res, 1, 'car verify of a tampered CAR');
    assert.match(res.stderr, /"Queue\/GLOBAL\.Night\.xml" was changed after the CAR was signed/);
  });

  test('verify refuses a file that is not a CAR with a clear message', async () => {
    const file = join(dir, 'not.car');
    writeFileSync(file, 'hello');
    const res = await runCli(['car', 'verify', '--trusted', join(dir, 'trusted'), file]);
    assertExit(res, 1, 'car verify of a text file');
    assert.match(res.stderr, /not a valid zip archive/);
  });
});

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * export and import against a stand-in for the server's XML interface, to pin down the requests the CLI sends
 * and how it reads the answers (the real server is exercised by the server's own tests).
 */
describe('millrace car: export and import requests', () => {
  const seen: Seen[] = [];
  const zip = Buffer.from('PK\u0005\u0006'.padEnd(22, '\u0000'), 'latin1');
  let server: Server;
  let url = '';
  let dir = '';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'millrace-car-http-'));
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        if (req.method === 'GET' && req.url?.startsWith('/millrace/api-rest/car/JobDefinition/GLOBAL.Load')) {
          res.writeHead(200, { 'Content-Type': 'application/zip' }).end(zip);
        } else if (req.method === 'PUT' && req.url === '/millrace/api-rest/car') {
          const status =
            req.headers.async === 'true'
              ? 'Queued'
              : req.headers['x-acme-description'] === 'bad'
                ? 'Error'
                : 'Completed';
          res.writeHead(200, { 'Content-Type': 'text/xml' });
          res.end(
            `<message><message-options><persist>N</persist></message-options><rest-import-job><job-id>42</job-id><status>${status}</status></rest-import-job></message>`,
          );
        } else {
          res.writeHead(404, { 'Content-Type': 'text/xml' });
          res.end(
            '<error><code>404</code><message>Unable to find object JobDefinition:GLOBAL.Missing &amp; co</message></error>',
          );
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/millrace`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const env = () => ({ MILLRACE_URL: url, MILLRACE_PASSWORD: 's3cret', MILLRACE_VENDOR: 'Acme' });
  const basic = `Basic ${Buffer.from('admin:s3cret').toString('base64')}`;

  test('export GETs the object as a CAR with basic auth and writes it to -o', async () => {
    const file = join(dir, 'load.car');
    const res = await runCli(['car', 'export', 'JobDefinition', 'GLOBAL.Load', '--references', '-o', file], env());
    assertExit(res, 0, 'car export');
    const request = seen.at(-1);
    assert.equal(request?.method, 'GET');
    assert.equal(request?.url, '/millrace/api-rest/car/JobDefinition/GLOBAL.Load?references=true');
    assert.equal(request?.headers.authorization, basic);
    assert.ok(readFileSync(file).equals(zip));
  });

  test('export prints the server error message and exits 1', async () => {
    const res = await runCli(['car', 'export', 'JobDefinition', 'GLOBAL.Missing'], env());
    assertExit(res, 1, 'car export of a missing object');
    assert.match(res.stderr, /404: Unable to find object JobDefinition:GLOBAL\.Missing & co/);
  });

  test('import PUTs the file with the vendor headers and prints the job', async () => {
    const file = join(dir, 'in.car');
    writeFileSync(file, zip);
    const args = ['car', 'import', file, '--target-partition', 'TEST', '--rule-set', 'GLOBAL.Promote'];
    args.push('--rule-set-properties', 'a=1,b=2', '--signed', '--description', 'nightly', '--user', 'ops');
    const res = await runCli(args, env());
    assertExit(res, 0, 'car import');
    assert.equal(res.stdout.trim(), 'import job 42: Completed');
    const request = seen.at(-1);
    assert.equal(request?.method, 'PUT');
    assert.ok(request?.body.equals(zip));
    assert.equal(request?.headers['content-type'], 'application/zip');
    assert.equal(request?.headers.authorization, `Basic ${Buffer.from('ops:s3cret').toString('base64')}`);
    assert.equal(request?.headers.async, 'false');
    assert.equal(request?.headers['x-acme-targetpartition'], 'TEST');
    assert.equal(request?.headers['x-acme-ruleset'], 'GLOBAL.Promote');
    assert.equal(request?.headers['x-acme-ruleset-properties'], 'a=1,b=2');
    assert.equal(request?.headers['x-acme-signed-car'], 'true');
    assert.equal(request?.headers['x-acme-description'], 'nightly');
    assert.equal(request?.headers['x-acme-filename'], 'in.car');
  });

  test('import exits 1 when the job did not complete, and 0 with --async once it is created', async () => {
    const file = join(dir, 'in.car');
    const failed = await runCli(['car', 'import', file, '--description', 'bad'], env());
    assertExit(failed, 1, 'car import ending in Error');
    assert.equal(failed.stdout.trim(), 'import job 42: Error');
    const queued = await runCli(['car', 'import', file, '--async', '--file-name', 'x.car'], env());
    assertExit(queued, 0, 'car import --async');
    assert.equal(queued.stdout.trim(), 'import job 42: Queued');
    assert.equal(seen.at(-1)?.headers.async, 'true');
    assert.equal(seen.at(-1)?.headers['x-acme-filename'], 'x.car');
  });

  test('a missing password or an unreachable server is reported plainly', async () => {
    const noPassword = await runCli(['car', 'export', 'JobDefinition', 'GLOBAL.Load'], { MILLRACE_URL: url });
    assertExit(noPassword, 1, 'car export without a password');
    assert.match(noPassword.stderr, /MILLRACE_PASSWORD/);
    const closed = await runCli(
      ['car', 'export', 'JobDefinition', 'GLOBAL.Load', '--url', 'http://127.0.0.1:1/x'],
      env(),
    );
    assertExit(closed, 1, 'car export to a closed port');
    assert.match(closed.stderr, /cannot reach http:\/\/127\.0\.0\.1:1\/x\/api-rest\/car\/JobDefinition\/GLOBAL\.Load/);
  });
});
