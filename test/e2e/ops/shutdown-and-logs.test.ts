import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { JSON_BASE, suiteServer } from '../../helpers/cli.ts';

const KEY = 'shutdown-test-admin-key-0123456789';
const PASSWORD = 'shutdown-test-password-42';

/**
 * SIGTERM during a burst of submits stops the server (exit 0) and every submit it
 * acknowledged is stored; its log is JSON lines with the request id of every request, and never a key or password.
 */
for (const backend of backends()) {
  describe(`SIGTERM during a burst of submits, and the log (${backend.name})`, () => {
    const server = suiteServer(backend, { MILLRACE_ADMIN_API_KEY: KEY, MILLRACE_ADMIN_PASSWORD: PASSWORD });
    const { api, start } = server;

    test('every acknowledged submit is stored after the restart; the log names requests, never secrets', async () => {
      // A request with its own id, and one with basic auth, for the log.
      const traced = await fetch(`http://127.0.0.1:${server.port}${JSON_BASE}/Queue/GLOBAL.Default`, {
        headers: { 'X-API-Key': KEY, 'X-Request-Id': 'trace-me-123' },
      });
      assert.equal(traced.status, 200);
      assert.equal(traced.headers.get('x-request-id'), 'trace-me-123');
      const basic = await fetch(`http://127.0.0.1:${server.port}/millrace/api-rest/version`, {
        headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` },
      });
      await basic.text();

      const acknowledged: number[] = [];
      let stopped = false;
      const body = { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] };
      const submitter = async () => {
        while (!stopped) {
          try {
            const res = await api('POST', '/Job/GLOBAL.System_Sleep?fields=jobId', body);
            if (res.status === 201) acknowledged.push(res.json.jobId);
          } catch {
            // Refused or reset while stopping: not acknowledged, so nothing is owed.
            if (stopped) return;
            await new Promise((r) => setTimeout(r, 10));
          }
        }
      };
      const burst = [submitter(), submitter(), submitter(), submitter()];
      while (acknowledged.length < 40) await new Promise((r) => setTimeout(r, 20));
      const code = await server.serve.stop();
      stopped = true;
      await Promise.all(burst);
      assert.equal(code, 0, server.serve.output());
      const log = server.serve.output();
      assert.match(log, /SIGTERM received, shutting down/);

      await start();
      for (const id of acknowledged)
        assert.equal((await api('GET', `/Job/${id}?fields=jobId`)).status, 200, `job ${id}`);

      // The log: JSON lines; each request's access line carries its id; no key, password or Authorization.
      const lines = log
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const access = lines.filter((l) => l.msg === 'request');
      assert.ok(access.length >= acknowledged.length, 'an access line per request');
      for (const l of access) assert.match(String(l.reqId), /\S/, JSON.stringify(l));
      const mine = access.find((l) => l.reqId === 'trace-me-123');
      assert.equal(mine?.path, `${JSON_BASE}/Queue/GLOBAL.Default`);
      assert.equal(mine?.status, 200);
      assert.ok(!log.includes(KEY), 'the API key is not in the log');
      assert.ok(!log.includes(PASSWORD), 'the password is not in the log');
      assert.ok(!/authorization|x-api-key/i.test(log), 'no credential headers in the log');
    });
  });
}
