import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitForJob } from '../../helpers/wait.ts';

/** What the server logs, at its most talkative level, kept in memory. */
function captureLog(): { logger: pino.Logger; text(): string } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, sink), text: () => text };
}

/** Requests carrying a password, good and bad: neither the answers nor the server's log show it. */
for (const backend of backends()) {
  describe(`a credential's password stays out of answers and logs (${backend.name})`, () => {
    let t: TestServer;
    const log = captureLog();
    const pw = `Pw-${randomBytes(12).toString('hex')}`;
    before(async () => {
      // Listening, with its local agent (whose lines the server logs), so credential jobs run too.
      t = await startTestServer(backend, {}, { logger: log.logger, listen: true });
    });
    after(() => t.close());

    test('refused bodies (bad JSON, wrong types, unknown fields, too long) answer 4xx without echoing it', async () => {
      const json = { 'content-type': 'application/json' };
      const attempts = [
        { payload: `{"RealUser": "u", "Password": "${pw}"`, headers: json },
        { payload: `{"RealUser": "u", "Password": ${pw}}`, headers: json },
        { payload: `Password=${pw}`, headers: { 'content-type': 'text/plain' } },
        { body: { RealUser: 'u', Password: pw, Pasword: pw } },
        { body: { RealUser: 5, Password: pw } },
        { body: { Password: pw } },
        { body: { RealUser: 'u', Password: { value: pw } } },
        { body: { RealUser: 'u', Password: [pw] } },
        { body: { RealUser: 'u', Password: pw.repeat(100) } },
        { body: { RealUser: `u\n${pw}`, Password: pw } },
        { body: { RealUser: 'u', Password: pw, VirtualUser: pw.replace('-', ' ') } },
      ];
      for (const [i, a] of attempts.entries()) {
        const r = await t.req('POST', `/Credential/GLOBAL.Bad${i}`, a);
        assert.ok(r.status >= 400 && r.status < 500, `attempt ${i}: ${r.status} ${r.body}`);
        assert.equal(r.body.includes(pw), false, `attempt ${i} echoes the password: ${r.body}`);
      }
      // Into a partition that does not exist, and onto a key that is not one.
      for (const path of ['/Credential/Nowhere.Db', '/Credential/not%20a%20key'])
        assert.equal((await t.req('POST', path, { body: { RealUser: 'u', Password: pw } })).body.includes(pw), false);
      const update = await t.req('PUT', '/Credential/GLOBAL.Missing', { body: { Password: pw } });
      assert.equal(update.status, 404);
      assert.equal(update.body.includes(pw), false);
    });

    test('accepted ones neither', async () => {
      const created = await t.req('POST', '/Credential/GLOBAL.Good', { body: { RealUser: 'u', Password: pw } });
      assert.equal(created.status, 201, created.body);
      assert.equal((await t.req('PUT', '/Credential/GLOBAL.Good', { body: { Password: pw } })).status, 200);
      const duplicate = await t.req('POST', '/Credential/GLOBAL.Good', { body: { RealUser: 'u', Password: pw } });
      assert.equal(duplicate.status, 409);
      for (const r of [created, duplicate]) assert.equal(r.body.includes(pw), false);
    });

    test('jobs that run with it, or fail to find theirs, neither', async () => {
      const define = (name: string, credential: string) =>
        t.req('POST', `/JobDefinition/GLOBAL.${name}`, {
          body: {
            JobDefinitionType: 'BASH',
            Script: 'echo "$CREDENTIAL_PASSWORD" >&2; exit 3',
            Credential: credential,
          },
        });
      assert.equal((await define('UsesGood', 'GLOBAL.Good')).status, 201);
      assert.equal((await define('UsesNone', 'NoSuchUser')).status, 201);
      for (const name of ['UsesGood', 'UsesNone']) {
        const submitted = await t.req('POST', `/Job/GLOBAL.${name}`, { body: {} });
        assert.equal(submitted.status, 201, submitted.body);
        const job = await waitForJob((path) => t.req('GET', path), submitted.json.jobId);
        assert.equal(job.Status, 'Error');
        assert.equal(JSON.stringify(job).includes(pw), false);
      }
    });

    test('the log holds no trace of it', () => {
      assert.match(log.text(), /Millrace serving/);
      assert.equal(log.text().includes(pw), false);
    });
  });
}
