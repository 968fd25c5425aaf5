import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import pg from 'pg';
import { backends } from '../../helpers/backends.ts';
import { createPgDatabase } from '../../helpers/pg.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

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

/** Peak resident memory (VmHWM) of a process, in bytes. */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1]) * 1024;
}

/**
 * SQL jobs run by the real local agent against a database of the test PostgreSQL, as a login role of their own
 * (the job's credential): transactions, bound parameters, a million rows to result.csv, kill.
 */
const enabled = process.env.MILLRACE_TEST_PG_URL !== undefined && process.env.MILLRACE_TEST_PG_URL !== '';
for (const backend of enabled ? backends().slice(0, 1) : []) {
  describe(`SQL jobs (Millrace on ${backend.name})`, () => {
    let t: TestServer;
    const serverLog = captureLog();
    let db: Awaited<ReturnType<typeof createPgDatabase>>;
    let admin: pg.Client;
    const hex = randomBytes(6).toString('hex');
    const role = `job_${hex}`;
    const password = `sql-${hex}-secret`;
    let database: string;
    const get = (path: string) => t.req('GET', path);

    before(async () => {
      db = await createPgDatabase();
      admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await admin.query(`GRANT ALL ON SCHEMA public TO ${role}`);
      await admin.query(`CREATE TABLE orders (id int PRIMARY KEY, note text)`);
      await admin.query(`GRANT ALL ON orders TO ${role}`);
      const url = new URL(db.url);
      url.username = '';
      url.password = '';
      database = url.toString();
      t = await startE2eServer(backend, {}, { logger: serverLog.logger });
      const ps = await t.req('PUT', '/ProcessServer/GLOBAL.Local', { body: { DefinitionTypes: ['BASH', 'SQL'] } });
      assert.equal(ps.status, 200, ps.body);
      const c = await t.req('POST', '/Credential/GLOBAL.Db', { body: { RealUser: role, Password: password } });
      assert.equal(c.status, 201, c.body);
    });
    after(async () => {
      await t?.close();
      await admin?.end();
      await db?.drop();
    });

    const define = async (name: string, script: string, extra: Record<string, unknown> = {}, transaction = true) => {
      const r = await t.req('POST', `/JobDefinition/GLOBAL.${name}`, {
        body: {
          JobDefinitionType: 'SQL',
          Sql: { Credential: 'GLOBAL.Db', Database: database, Script: script, Transaction: transaction },
          ...extra,
        },
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
    const out = (job: any, name: string) => job.JobParameters.find((p: any) => p.Name === name)?.OutValueString;

    test('statements run in order; the last one’s rows are result.csv (RFC 4180) and ROW_COUNT', async () => {
      await define(
        'Report',
        `INSERT INTO orders VALUES (1, 'plain'), (2, 'with "quotes", and a comma');
         -- a comment; with a semicolon
         SELECT id, note, NULL AS nothing FROM orders WHERE id IN (1, 2) ORDER BY id`,
        { Parameters: [{ Name: 'ROW_COUNT', Direction: 'Out' }] },
      );
      const job = await waitForJob(get, await submit('Report'));
      assert.equal(job.Status, 'Completed', JSON.stringify(job.JobNotes));
      assert.equal(
        await file(job, 'result.csv'),
        'id,note,nothing\r\n1,plain,\r\n2,"with ""quotes"", and a comma",\r\n',
      );
      assert.equal(out(job, 'ROW_COUNT'), '2');
    });

    test('a failing statement rolls back the earlier ones; the database’s error is in stderr.log', async () => {
      await define('Fails', `INSERT INTO orders VALUES (10, 'kept?'); INSERT INTO orders VALUES (1, 'duplicate')`);
      const job = await waitForJob(get, await submit('Fails'));
      assert.equal(job.Status, 'Error');
      assert.match(await file(job, 'stderr.log'), /duplicate key value violates unique constraint/);
      assert.equal((await admin.query('SELECT count(*)::int AS n FROM orders WHERE id = 10')).rows[0].n, 0);
      await define(
        'NoTransaction',
        `INSERT INTO orders VALUES (11, 'kept'); INSERT INTO orders VALUES (1, 'duplicate')`,
        {},
        false,
      );
      assert.equal((await waitForJob(get, await submit('NoTransaction'))).Status, 'Error');
      assert.equal((await admin.query('SELECT count(*)::int AS n FROM orders WHERE id = 11')).rows[0].n, 1);
    });

    test(':NAME is bound, never spliced: a hostile value is stored verbatim; ":NAME" in a literal stays text', async () => {
      const hostile = `x'); DROP TABLE orders; --`;
      await define(
        'Bind',
        `INSERT INTO orders VALUES (:ID::int, :NOTE); SELECT note, ':NOTE' AS literal, id::text::int AS id FROM orders WHERE id = :ID::int`,
        { Parameters: [{ Name: 'ID' }, { Name: 'NOTE' }] },
      );
      const job = await waitForJob(
        get,
        await submit('Bind', {
          JobParameters: [
            { Name: 'ID', InValueString: '20' },
            { Name: 'NOTE', InValueString: hostile },
          ],
        }),
      );
      assert.equal(job.Status, 'Completed', await file(job, 'stderr.log'));
      const stored = await admin.query('SELECT note FROM orders WHERE id = 20');
      assert.equal(stored.rows[0].note, hostile);
      assert.equal(await file(job, 'result.csv'), `note,literal,id\r\n${hostile},:NOTE,20\r\n`);
    });

    // The bound is on the agent's growth while the job runs (the idle agent alone holds about 75 MB); the rows held
    // at once would take several hundred MB.
    test('1,000,000 rows stream to result.csv: the agent’s peak RSS grows by less than 50 MB', async (ctx) => {
      const agent = t.server.localAgent?.current()?.pid;
      assert.ok(agent);
      const before = peakRss(agent);
      await define('Million', `SELECT g AS n, 'row ' || g AS label FROM generate_series(1, 1000000) AS g`, {
        Parameters: [{ Name: 'ROW_COUNT', Direction: 'Out' }],
      });
      const job = await waitForJob(get, await submit('Million'), undefined, 600_000);
      assert.equal(job.Status, 'Completed', JSON.stringify(job.JobNotes));
      assert.equal(out(job, 'ROW_COUNT'), '1000000');
      const f = job.JobFiles.find((x: { Name: string }) => x.Name === 'result.csv');
      const tail = await t.req('GET', `/JobFile/${f.uniqueId}/content`, { headers: { range: 'bytes=-40' } });
      assert.match(tail.body, /\r\n1000000,row 1000000\r\n$/);
      const grown = peakRss(agent) - before;
      ctx.diagnostic(`agent VmHWM ${before} bytes before, grown by ${grown} bytes; result.csv ${f.Size ?? '?'} bytes`);
      assert.ok(grown < 50 * 1024 * 1024, `agent VmHWM grew by ${grown} bytes`);
    });

    test('kill cancels the running statement on the server (pg_stat_activity no longer shows it)', async () => {
      await define('Sleepy', 'SELECT pg_sleep(600)');
      const id = await submit('Sleepy');
      await waitForJob(get, id, ['Running']);
      const active = "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)' AND state = 'active'";
      await waitFor('the statement on the server', async () =>
        (await admin.query(active)).rowCount ? true : undefined,
      );
      assert.equal((await t.req('PUT', `/Job/${id}/kill`)).status, 200);
      const job = await waitForJob(get, id);
      assert.equal(job.Status, 'Killed');
      await waitFor('the statement to be gone', async () => ((await admin.query(active)).rowCount ? undefined : true));
    });

    test('the password is in no file of the data folder, no server log line and no answer', async () => {
      const found: string[] = [];
      for (const e of readdirSync(t.config.dataDir, { withFileTypes: true, recursive: true })) {
        if (!e.isFile()) continue;
        const path = join(e.parentPath, e.name);
        try {
          if (readFileSync(path).includes(password)) found.push(path);
        } catch {
          // gone meanwhile
        }
      }
      assert.deepEqual(found, []);
      assert.match(serverLog.text(), /agent connected/);
      assert.equal(serverLog.text().includes(password), false);
      const jobs = await get('/Job?Definition=GLOBAL.Bind');
      assert.equal(jobs.body.includes(password), false);
    });
  });
}
