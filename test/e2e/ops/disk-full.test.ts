import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { interfacePaths } from '../../../src/config/config.ts';
import { spooled } from '../../helpers/agent-peer.ts';
import { backends } from '../../helpers/backends.ts';
import { type Filler, postgresFiller, sqliteFiller } from '../../helpers/full-database.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, basicAuth, startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/** Waits until the local agent's spool holds the job's first attempt as finished: its report waits there. */
const spooledFinished = (agentDir: string, job: number) =>
  waitFor(
    'the agent to spool the finished job',
    async () => {
      const e = spooled(agentDir).get(`${job}.1`);
      return e?.ok && e.entry.state === 'finished' ? true : undefined;
    },
    60_000,
    200,
  );

/**
 * A full disk is an answered condition (docs/architecture.md §9): writes answer 503 naming the full disk with
 * Retry-After on both interfaces, /health/ready says not ready and why, and once space is freed everything goes on
 * without a restart — a BASH job that finished on the real local agent meanwhile ends with its real status and its
 * whole output. Everything goes over a real socket.
 *
 * The database is made full as it is on a full file system, without needing one: SQLite's `max_page_count` on the
 * server's own writer connection (the setting belongs to a connection), PostgreSQL's 53100 (disk_full) raised by
 * PostgreSQL itself from triggers on the tables a write grows (test/helpers/full-database.ts). Where the test may
 * mount (root, CAP_SYS_ADMIN), real small file systems are filled too: a tmpfs holding the job files folder, and one
 * holding a PostgreSQL tablespace with the tables a write grows; elsewhere those tests are skipped with the reason.
 */

const OUTPUT_BYTES = 300 * 1024;
const run = promisify(execFile);

function client(t: TestServer) {
  const { port } = t.server.app.server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${origin}${t.base}${path}`, {
      method,
      headers: { 'X-API-Key': ADMIN_KEY, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {}
    // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON the server answers
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text, json: json as any };
  };
  const xmlPut = async (xml: string) => {
    const res = await fetch(`${origin}${interfacePaths(t.config).xmlBase}/xml`, {
      method: 'PUT',
      headers: { authorization: basicAuth('admin', ADMIN_PASSWORD), 'content-type': 'application/xml' },
      body: xml,
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
  };
  const ready = async () => {
    const res = await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(20_000) });
    return { status: res.status, json: (await res.json()) as { status: string; reason?: string } };
  };
  return { api, xmlPut, ready };
}

/** A BASH definition whose job waits for `gate`, then writes OUTPUT_BYTES to stdout and exits 3 (Completed). */
async function gatedDefinition(api: ReturnType<typeof client>['api'], name: string, gate: string): Promise<void> {
  const r = await api('POST', `/JobDefinition/GLOBAL.${name}`, {
    JobDefinitionType: 'BASH',
    Script: `while [ ! -e '${gate}' ]; do sleep 0.2; done\nhead -c ${OUTPUT_BYTES} /dev/zero | tr '\\0' x\nexit 3\n`,
    ReturncodeMapToCompleted: '3',
  });
  assert.equal(r.status, 201, r.body);
}

/** Submits (held, so nothing more runs) until one is refused: answers are counted by status. */
async function submitUntilRefused(api: ReturnType<typeof client>['api'], definition: string) {
  const answers = new Map<number, number>();
  for (let i = 0; i < 2000; i++) {
    const r = await api('POST', `/Job/${definition}`, { HoldOnSubmit: true });
    answers.set(r.status, (answers.get(r.status) ?? 0) + 1);
    if (r.status !== 201) return { refused: r, answers };
  }
  throw new Error('2000 submits were all stored: the database is not full');
}

const queueXml = (name: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Queue><Comment/><Description>${'d'.repeat(250)}</Description><Name>${name}</Name><Partition type="Partition" path="GLOBAL"/><ParentApplication/><ExecutionSize>4</ExecutionSize><Held>false</Held></Queue>`;

/**
 * Writes answer 503 naming the disk, readiness says why, and a job finished meanwhile ends with its real status
 * and whole output once `filler` frees space. With job files in the database, its output is refused before its
 * report; with them in a folder (PostgreSQL's triggers only), its report's own commit is.
 */
async function fullDatabaseScenario(t: TestServer, filler: Filler): Promise<void> {
  const { api, xmlPut, ready } = client(t);
  const gate = join(t.config.dataDir, 'gate');
  await gatedDefinition(api, 'Gated', gate);
  const job = (await api('POST', '/Job/GLOBAL.Gated')).json.jobId as number;
  await waitForJob((p) => api('GET', p), job, ['Running'], 60_000);
  assert.deepEqual(await ready(), { status: 200, json: { status: 'ready' } });

  await filler.fill();
  const { refused, answers } = await submitUntilRefused(api, 'GLOBAL.Gated');
  assert.deepEqual(
    [...answers.keys()].filter((s) => s !== 201 && s !== 503),
    [],
    'only 201 and 503',
  );
  assert.equal(refused.status, 503, refused.body);
  assert.equal(refused.retryAfter, '30');
  assert.equal(refused.json.code, '503');
  assert.match(refused.json.message, /disk is full/);

  // The XML interface answers its own record.
  let xml = await xmlPut(queueXml('Full0'));
  for (let i = 1; xml.status === 201 && i < 200; i++) xml = await xmlPut(queueXml(`Full${i}`));
  assert.equal(xml.status, 503, xml.body);
  assert.equal(xml.retryAfter, '30');
  assert.match(
    xml.body,
    /^<\?xml[^>]*>\s*<error>\s*<code>503<\/code>\s*<message>The disk is full[^<]*<\/message>\s*<\/error>\s*$/,
  );

  const notReady = await ready();
  assert.equal(notReady.status, 503);
  assert.equal(notReady.json.status, 'not ready');
  assert.match(String(notReady.json.reason), /disk is full: the database could not be written/);

  // The job ends on the agent while nothing can be stored: its output and its report wait in the agent's spool.
  writeFileSync(gate, '');
  const agentDir = join(t.config.dataDir, 'agents', 'GLOBAL.Local');
  await spooledFinished(agentDir, job);
  const meanwhile = await api('GET', `/Job/${job}`);
  assert.equal(meanwhile.json.Status, 'Running', 'its end could not be stored yet');
  assert.equal((await ready()).status, 503, 'still not ready');

  // Space is freed: no restart, everything goes on.
  await filler.free();
  await waitFor('ready again', async () => ((await ready()).status === 200 ? true : undefined), 30_000, 200);
  const ended = await waitForJob((p) => api('GET', p), job, undefined, 60_000);
  assert.equal(ended.Status, 'Completed');
  assert.equal(ended.ReturnCode, 3);
  const stdout = ended.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
  assert.equal(stdout?.Size, OUTPUT_BYTES);
  const content = await api('GET', `/JobFile/${stdout.uniqueId}/content`);
  assert.equal(content.status, 200);
  assert.equal(content.body, 'x'.repeat(OUTPUT_BYTES), 'the whole output, written while the disk was full');
  const again = await api('POST', '/Job/GLOBAL.Gated', { HoldOnSubmit: true });
  assert.equal(again.status, 201, again.body);
  assert.equal((await xmlPut(queueXml('AfterFull'))).status, 201);
  await waitFor('the agent to drop the acknowledged report', async () =>
    spooled(agentDir).has(`${job}.1`) ? undefined : true,
  );
}

// Job files in the database are refused with it, so the job's output is refused before its report; job files in a
// folder isolate the report's own commit, which only PostgreSQL refuses for certain (a SQLite row updated in place
// may still fit in its page of a file that cannot grow).
const cases = backends().flatMap((backend) => [
  { backend, jobFiles: 'database' },
  ...(backend.name === 'postgres' ? [{ backend, jobFiles: 'a folder' }] : []),
]);

for (const { backend, jobFiles } of cases) {
  describe(`a full database (${backend.name}), job files in ${jobFiles}`, () => {
    let t: TestServer;
    let filler: Filler;
    before(async () => {
      t = await startTestServer(backend, jobFiles === 'database' ? { jobFilesDir: 'database' } : {}, { listen: true });
      filler =
        backend.name === 'sqlite' ? sqliteFiller(t.server.store) : postgresFiller(t.config.databaseUrl as string);
    });
    after(async () => {
      await filler?.free().catch(() => {});
      await t?.close();
    });

    test('writes answer 503 naming the disk, readiness says why, and a job finished meanwhile ends with its real status and output once space is freed', () =>
      fullDatabaseScenario(t, filler));
  });
}

/**
 * Mounts a small tmpfs at `dir` (owned by `owner`, a user name); a reason when this machine does not let the test
 * (not root, no CAP_SYS_ADMIN in a container).
 */
async function mountTmpfs(dir: string, size: string, owner?: string): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'mounting a small file system needs root';
  try {
    let ids = '';
    if (owner) {
      const id = async (flag: string) => (await run('id', [flag, owner])).stdout.trim();
      ids = `,uid=${await id('-u')},gid=${await id('-g')},mode=0700`;
    }
    await run('mount', ['-t', 'tmpfs', '-o', `size=${size}${ids}`, 'tmpfs', dir]);
    return undefined;
  } catch (err) {
    return `mounting a tmpfs is not permitted here: ${(err as { stderr?: string }).stderr?.trim() || String(err)}`;
  }
}

/** Fills the file system at `dir` with one file until it refuses (ENOSPC). */
async function fillUp(dir: string): Promise<string> {
  const file = join(dir, 'filler');
  await run('sh', ['-c', `dd if=/dev/zero of='${file}' bs=64k 2>/dev/null; true`]);
  return file;
}

const [sqlite] = backends();
describe('a full disk under the job files (a folder on a small tmpfs)', () => {
  let mountDir = '';
  let mounted: string | undefined = 'not tried';
  let t: TestServer | undefined;
  before(async () => {
    mountDir = await mkdtemp(join(tmpdir(), 'millrace-full-jobfiles-'));
    mounted = await mountTmpfs(mountDir, '4m');
    if (mounted === undefined && sqlite) t = await startTestServer(sqlite, { jobFilesDir: mountDir }, { listen: true });
  });
  after(async () => {
    await t?.close();
    if (mounted === undefined) await run('umount', [mountDir]).catch(() => run('umount', ['-l', mountDir]));
    await rm(mountDir, { recursive: true, force: true });
  });

  test('output refused with ENOSPC: readiness says why, the job ends with its real status and whole output once space is freed', async (ctx) => {
    if (mounted !== undefined || !t) {
      ctx.skip(mounted ?? 'no SQLite backend');
      return;
    }
    const { api, ready } = client(t);
    const gate = join(t.config.dataDir, 'gate');
    await gatedDefinition(api, 'Gated', gate);
    const job = (await api('POST', '/Job/GLOBAL.Gated')).json.jobId as number;
    await waitForJob((p) => api('GET', p), job, ['Running'], 60_000);
    const filler = await fillUp(mountDir);

    writeFileSync(gate, '');
    const notReady = await waitFor(
      'readiness to see the full disk',
      async () => {
        const r = await ready();
        return r.status === 503 ? r : undefined;
      },
      60_000,
      200,
    );
    assert.match(String(notReady.json.reason), /disk is full: the job files could not be written .*ENOSPC/);
    // The database has room: a submit is stored, and the job waits for its output to be stored before it ends.
    assert.equal((await api('POST', '/Job/GLOBAL.Gated', { HoldOnSubmit: true })).status, 201);
    const agentDir = join(t.config.dataDir, 'agents', 'GLOBAL.Local');
    await spooledFinished(agentDir, job);
    assert.equal((await api('GET', `/Job/${job}`)).json.Status, 'Running');

    await rm(filler);
    await waitFor('ready again', async () => ((await ready()).status === 200 ? true : undefined), 30_000, 200);
    const ended = await waitForJob((p) => api('GET', p), job, undefined, 60_000);
    assert.equal(ended.Status, 'Completed');
    assert.equal(ended.ReturnCode, 3);
    const stdout = ended.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
    const content = await api('GET', `/JobFile/${stdout.uniqueId}/content`);
    assert.equal(content.body, 'x'.repeat(OUTPUT_BYTES), 'the whole output');
  });
});

/**
 * PostgreSQL on a real full disk: the tables a write grows are moved to a tablespace on a small tmpfs, which is
 * then filled (PostgreSQL itself answers 53100, "could not extend file … No space left on device"), and freed.
 */
const [, postgres] = backends();
describe('a full disk under PostgreSQL (a tablespace on a small tmpfs)', () => {
  let mountDir = '';
  let mounted: string | undefined = postgres ? 'not tried' : 'no PostgreSQL';
  let t: TestServer | undefined;
  let filler = '';
  const tablespace = `mr_full_${process.pid}`;
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: process.env.MILLRACE_TEST_PG_URL });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  before(async () => {
    if (!postgres) return;
    mountDir = await mkdtemp(join(tmpdir(), 'millrace-full-pg-'));
    // The server process runs as `postgres` when the cluster was started by root (scripts/pg-cluster.sh).
    mounted = await mountTmpfs(mountDir, '16m', 'postgres');
    if (mounted !== undefined) return;
    t = await startTestServer(postgres, { jobFilesDir: 'database' }, { listen: true });
    await admin(`create tablespace ${tablespace} location '${mountDir}'`);
    const tables = ['jobs', 'job_history', 'job_files', 'objects', 'meta', 'job_file_chunks'];
    const c = new pg.Client({ connectionString: t.config.databaseUrl });
    await c.connect();
    try {
      for (const table of tables) await c.query(`alter table ${table} set tablespace ${tablespace}`);
    } finally {
      await c.end();
    }
  });
  after(async () => {
    await t?.close();
    if (postgres && mounted === undefined) await admin(`drop tablespace if exists ${tablespace}`).catch(() => {});
    if (mounted === undefined) await run('umount', [mountDir]).catch(() => run('umount', ['-l', mountDir]));
    if (mountDir) await rm(mountDir, { recursive: true, force: true });
  });

  test('writes answer 503 naming the disk, readiness says why, and a job finished meanwhile ends with its real status and output once space is freed', async (ctx) => {
    if (mounted !== undefined || !t) {
      ctx.skip(mounted ?? 'no server');
      return;
    }
    await fullDatabaseScenario(t, {
      fill: async () => {
        filler = await fillUp(mountDir);
      },
      free: () => rm(filler, { force: true }),
    });
  });
});

/**
 * An in-server job (System_Sleep) that ends while the database is full is not left Running: its end is stored
 * again every few seconds, and is once space is freed. On PostgreSQL, whose triggers refuse every update of a job
 * (a SQLite row updated in place may still fit in its page of a file that cannot grow).
 */
for (const backend of backends().filter((b) => b.name === 'postgres')) {
  describe(`an in-server job ending while the database is full (${backend.name})`, () => {
    let t: TestServer;
    let filler: Filler;
    const lines: string[] = [];
    before(async () => {
      const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
      t = await startTestServer(backend, {}, { listen: true, logger });
      filler = postgresFiller(t.config.databaseUrl as string);
    });
    after(async () => {
      await filler?.free().catch(() => {});
      await t?.close();
    });

    test('stays Running while its end cannot be stored, and is Completed once space is freed', async () => {
      const { api } = client(t);
      const submitted = await api('POST', '/Job/GLOBAL.System_Sleep', {
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 10_000 }],
      });
      assert.equal(submitted.status, 201, submitted.body);
      const job = submitted.json.jobId as number;
      await waitForJob((p) => api('GET', p), job, ['Running'], 30_000);
      await filler.fill();
      await waitFor(
        'the end not stored',
        async () =>
          lines.some((l) => l.includes('the end of an in-server job was not stored') && l.includes(`"jobId":${job}`))
            ? true
            : undefined,
        60_000,
        200,
      );
      assert.equal((await api('GET', `/Job/${job}`)).json.Status, 'Running');
      await filler.free();
      const ended = await waitForJob((p) => api('GET', p), job, undefined, 30_000);
      assert.equal(ended.Status, 'Completed');
    });
  });
}
