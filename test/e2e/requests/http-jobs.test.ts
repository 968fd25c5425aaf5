import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { backends } from '../../helpers/backends.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

const BIG = 50 * 1024 * 1024;

/** The server's log at trace level, kept in memory to be searched. */
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

/** Every file under `dir` that holds `needle` (as text or bytes). */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    try {
      if (readFileSync(path).includes(needle)) found.push(path);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Peak resident memory (VmHWM) of a process, in bytes. */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1]) * 1024;
}

/**
 * HTTP jobs run by the real local agent against a server this test starts on loopback: substituted parameters,
 * basic and bearer credentials (the password searched for everywhere), statuses, kill, redirects, a 50 MB body.
 */
for (const backend of backends()) {
  describe(`HTTP jobs (${backend.name})`, () => {
    let t: TestServer;
    const serverLog = captureLog();
    let target: Server;
    let base: string;
    const hex = randomBytes(6).toString('hex');
    const password = `pw-${hex}-geheim`;
    const token = `tok-${hex}-bearer`;
    const received: Array<{ method: string; url: string; body: string; headers: IncomingMessage['headers'] }> = [];
    const slowOpen = new Set<ServerResponse>();
    const get = (path: string) => t.req('GET', path);

    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      received.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      const url = new URL(req.url ?? '/', 'http://x');
      const auth = req.headers.authorization ?? '';
      if (url.pathname === '/echo') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-answer': 'yes' });
        res.end(JSON.stringify({ id: 4711, items: [{ name: 'first' }], method: req.method, body }));
      } else if (url.pathname === '/basic') {
        const ok = auth === `Basic ${Buffer.from(`apiuser:${password}`).toString('base64')}`;
        res.writeHead(ok ? 200 : 401).end(ok ? 'welcome' : 'who are you');
      } else if (url.pathname === '/bearer') {
        const ok = auth === `Bearer ${token}`;
        res.writeHead(ok ? 200 : 401).end(ok ? 'welcome' : 'who are you');
      } else if (url.pathname === '/status') {
        res.writeHead(Number(url.searchParams.get('code'))).end('status body');
      } else if (url.pathname === '/slow') {
        slowOpen.add(res);
        res.once('close', () => slowOpen.delete(res));
        res.writeHead(200);
        res.write('started\n'); // and never ends
      } else if (url.pathname.startsWith('/hop/')) {
        const n = Number(url.pathname.slice(5));
        if (n === 0) res.writeHead(200).end(`arrived with ${auth === '' ? 'no' : 'an'} authorization`);
        else res.writeHead(302, { location: `/hop/${n - 1}` }).end();
      } else if (url.pathname === '/big') {
        res.writeHead(200, { 'content-length': String(BIG) });
        const chunk = Buffer.alloc(1024 * 1024, 'x');
        for (let i = 0; i < BIG / chunk.length; i++) if (!res.write(chunk)) await once(res, 'drain');
        res.end();
      } else res.writeHead(404).end();
    };

    before(async () => {
      target = createServer((req, res) => void handle(req, res));
      target.listen(0, '127.0.0.1');
      await once(target, 'listening');
      base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
      t = await startE2eServer(backend, {}, { logger: serverLog.logger });
      const ps = await t.req('PUT', '/ProcessServer/GLOBAL.Local', {
        body: { DefinitionTypes: ['BASH', 'HTTP'] },
      });
      assert.equal(ps.status, 200, ps.body);
      for (const [key, body] of [
        ['GLOBAL.Api', { RealUser: 'apiuser', Password: password }],
        ['GLOBAL.Token', { RealUser: 'unused', Password: token, Protocol: 'bearer' }],
      ] as const)
        assert.equal((await t.req('POST', `/Credential/${key}`, { body })).status, 201);
    });
    after(async () => {
      for (const res of slowOpen) res.destroy();
      target?.close();
      await t?.close();
    });

    const define = async (name: string, http: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const r = await t.req('POST', `/JobDefinition/GLOBAL.${name}`, {
        body: { JobDefinitionType: 'HTTP', Http: http, ...extra },
      });
      assert.equal(r.status, 201, r.body);
    };
    const submit = async (name: string, body: unknown = {}) => {
      const r = await t.req('POST', `/Job/GLOBAL.${name}`, { body });
      assert.equal(r.status, 201, r.body);
      return r.json.jobId as number;
    };
    // biome-ignore lint/suspicious/noExplicitAny: a job as a client reads it
    const file = async (job: any, name: string): Promise<string> => {
      const f = job.JobFiles.find((x: { Name: string }) => x.Name === name);
      assert.ok(f, `${name} of Job:${job.jobId}: ${JSON.stringify(job.JobFiles)}`);
      const r = await t.req('GET', `/JobFile/${f.uniqueId}/content`);
      assert.equal(r.status, 200);
      return r.body;
    };
    // biome-ignore lint/suspicious/noExplicitAny: a job as a client reads it
    const outs = (job: any) => Object.fromEntries(job.JobParameters.map((p: any) => [p.Name, p.OutValueString]));

    test('POST with ${NAME} substituted into the URL, a header and the body; HTTP_STATUS and JSON-path Out values', async () => {
      await define(
        'Post',
        {
          Method: 'POST',
          Url: `${base}/echo?customer=\${CUSTOMER}`,
          // `constructor`, a name every object inherits, is a header like any other.
          Headers: { 'X-Order': 'order-${ORDER}', Accept: 'application/json', constructor: 'c-${ORDER}' },
          Body: '{"order": "${ORDER}"}',
        },
        {
          Parameters: [
            { Name: 'CUSTOMER' },
            { Name: 'ORDER' },
            { Name: 'HTTP_STATUS', Direction: 'Out' },
            { Name: 'ORDER_ID', Direction: 'Out', JsonPath: '$.id' },
            { Name: 'FIRST', Direction: 'Out', JsonPath: '$.items[0].name' },
          ],
        },
      );
      const id = await submit('Post', {
        JobParameters: [
          { Name: 'CUSTOMER', InValueString: 'Ada & Co' },
          { Name: 'ORDER', InValueString: 'A-17' },
        ],
      });
      const job = await waitForJob(get, id);
      assert.equal(job.Status, 'Completed', JSON.stringify(job.JobNotes));
      assert.equal(job.ReturnCode, 0);
      const seen = received.find((r) => r.url.startsWith('/echo?customer=Ada'));
      assert.ok(seen);
      assert.equal(seen.method, 'POST');
      assert.equal(new URL(seen.url, base).searchParams.get('customer'), 'Ada & Co');
      assert.equal(seen.headers['x-order'], 'order-A-17');
      assert.equal(seen.headers.accept, 'application/json');
      assert.ok(Object.hasOwn(seen.headers, 'constructor'));
      assert.equal(seen.headers.constructor, 'c-A-17');
      assert.equal(seen.body, '{"order": "A-17"}');
      assert.deepEqual(JSON.parse(await file(job, 'stdout.log')).body, '{"order": "A-17"}');
      assert.match(await file(job, 'headers.log'), /^HTTP\/1\.1 200 OK\n(.*\n)*x-answer: yes/im);
      assert.deepEqual(
        { s: outs(job).HTTP_STATUS, id: outs(job).ORDER_ID, first: outs(job).FIRST },
        { s: '200', id: '4711', first: 'first' },
      );
    });

    test('basic and bearer credentials: the server accepts them; the secret is in no file, log or answer', async () => {
      await define('Basic', { Url: `${base}/basic`, Credential: 'GLOBAL.Api' });
      await define('Bearer', { Url: `${base}/bearer`, Credential: 'GLOBAL.Token' });
      for (const name of ['Basic', 'Bearer']) {
        const job = await waitForJob(get, await submit(name));
        assert.equal(job.Status, 'Completed', `${name}: ${JSON.stringify(job.JobNotes)}`);
        assert.equal(await file(job, 'stdout.log'), 'welcome');
        const answers = [
          JSON.stringify(job),
          await file(job, 'headers.log'),
          await file(job, 'stderr.log'),
          (await get(`/JobDefinition/GLOBAL.${name}`)).body,
          (await get('/Credential/GLOBAL.Api')).body,
          (await get('/Credential/GLOBAL.Token')).body,
        ];
        for (const secret of [password, token]) for (const a of answers) assert.equal(a.includes(secret), false);
      }
      // The data folder holds the server's database, the agent's spool and work folders; the server's log (with the
      // agent's lines it logs) is searched at trace level.
      assert.match(serverLog.text(), /agent connected/);
      for (const secret of [password, token, Buffer.from(`apiuser:${password}`).toString('base64')]) {
        assert.deepEqual(filesHolding(t.config.dataDir, secret), []);
        assert.equal(serverLog.text().includes(secret), false);
      }
    });

    test('a status outside ExpectStatus ends in Error with the status in stderr.log; ranges are honoured', async () => {
      await define('Teapot', { Url: `${base}/status?code=418`, ExpectStatus: '200-299,304' });
      const job = await waitForJob(get, await submit('Teapot'));
      assert.equal(job.Status, 'Error');
      assert.equal(job.ReturnCode, 1);
      assert.match(await file(job, 'stderr.log'), /HTTP status 418 .*not in ExpectStatus 200-299,304/);
      assert.equal(await file(job, 'stdout.log'), 'status body');
      await define('Accepted', { Url: `${base}/status?code=418`, ExpectStatus: '400-499' });
      assert.equal((await waitForJob(get, await submit('Accepted'))).Status, 'Completed');
    });

    test('kill cancels a request that never completes: the job ends Killed and the connection is closed', async () => {
      await define('Slow', { Url: `${base}/slow`, TimeoutSeconds: 3600 });
      const id = await submit('Slow');
      await waitForJob(get, id, ['Running']);
      await waitFor('the slow request', async () => (slowOpen.size > 0 ? true : undefined));
      assert.equal((await t.req('PUT', `/Job/${id}/kill`)).status, 200);
      const job = await waitForJob(get, id);
      assert.equal(job.Status, 'Killed');
      await waitFor('the connection to close', async () => (slowOpen.size === 0 ? true : undefined));
    });

    test('redirects are followed up to ten hops (not with FollowRedirects false); the credential stays at its origin', async () => {
      await define('Hops', { Url: `${base}/hop/3` });
      const job = await waitForJob(get, await submit('Hops'));
      assert.equal(job.Status, 'Completed');
      assert.equal(await file(job, 'stdout.log'), 'arrived with no authorization');
      assert.equal((await file(job, 'headers.log')).match(/^HTTP\/1\.1 302/gm)?.length, 3);
      await define('TooMany', { Url: `${base}/hop/11` });
      const tooMany = await waitForJob(get, await submit('TooMany'));
      assert.equal(tooMany.Status, 'Error');
      assert.match(await file(tooMany, 'stderr.log'), /more than 10 redirects/);
      await define('NoFollow', { Url: `${base}/hop/1`, FollowRedirects: false, ExpectStatus: '302' });
      const stay = await waitForJob(get, await submit('NoFollow'));
      assert.equal(stay.Status, 'Completed');
      assert.match(await file(stay, 'headers.log'), /^location: \/hop\/0$/im);
    });

    // The bound is on the agent's growth while the job runs: the idle agent alone holds about 75 MB.
    test('a 50 MB response is streamed to stdout.log: the agent’s peak RSS grows by less than 100 MB', async (ctx) => {
      const pid = t.server.localAgent?.current()?.pid;
      assert.ok(pid);
      const before = peakRss(pid);
      await define('Big', { Url: `${base}/big` });
      const job = await waitForJob(get, await submit('Big'));
      assert.equal(job.Status, 'Completed');
      const f = job.JobFiles.find((x: { Name: string }) => x.Name === 'stdout.log');
      const tail = await t.req('GET', `/JobFile/${f.uniqueId}/content`, { headers: { range: `bytes=${BIG - 10}-` } });
      assert.equal(tail.status, 206);
      assert.equal(tail.body, 'x'.repeat(10));
      const grown = peakRss(pid) - before;
      ctx.diagnostic(`agent VmHWM ${before} bytes before, grown by ${grown} bytes`);
      assert.ok(grown < 100 * 1024 * 1024, `agent VmHWM grew by ${grown} bytes`);
    });

    test('without HTTP in DefinitionTypes no process server takes the job: the wait reason says so', async () => {
      await define('Unserved', { Url: `${base}/echo` });
      const ps = await t.req('PUT', '/ProcessServer/GLOBAL.Local', { body: { DefinitionTypes: ['BASH'] } });
      assert.equal(ps.status, 200);
      try {
        const id = await submit('Unserved');
        const reasons = await waitFor('the wait reason', async () => {
          const r = await get(`/Job/${id}/waiting`);
          return r.status === 200 && r.body.includes('NoProcessServer') ? r : undefined;
        });
        assert.match(reasons.body, /HTTP/);
        assert.equal((await t.req('PUT', `/Job/${id}/cancel`)).status, 200);
      } finally {
        await t.req('PUT', '/ProcessServer/GLOBAL.Local', { body: { DefinitionTypes: ['BASH', 'HTTP'] } });
      }
    });
  });
}
