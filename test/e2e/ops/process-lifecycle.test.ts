import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliEnv, httpGet, JSON_BASE, killServers, ROOT, startServe } from '../../helpers/cli.ts';
import { apiClient, freePort } from '../../helpers/http-client.ts';
import { descendants, processRuns, until } from '../../helpers/processes.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * The processes of a server end with it: a `millrace serve` started by the machine's Node (which runs itself again
 * under the installed one, bin/runtime.mjs) stops when the started process is SIGKILLed, and the local agent stops
 * with its server, however the server ends (docs/architecture.md §7).
 */

const KEY = 'lifecycle-test-admin-key-0123456789';
const INSTALLED = realpathSync(join(ROOT, 'node_modules', '.bin', 'node'));

/** A Node of the machine other than the installed one, as a user would start Millrace with; undefined if none. */
function otherNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node'])
    if (existsSync(candidate) && realpathSync(candidate) !== INSTALLED) return candidate;
  return undefined;
}

/** Whether a new server could listen on the port now (what a supervisor's restart needs). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** The pid the local agent of a data folder wrote into its pid file, once it did. */
function localAgentPid(dataDir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, 'agents', 'GLOBAL.Local', 'agent.pid'), 'utf8'), 10);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `<node> bin/millrace <args>` with `input` on its standard input; resolves with its exit code and stdout. */
function run(
  node: string,
  args: string[],
  input: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['bin/millrace', ...args], {
      cwd: ROOT,
      env: cliEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve({ code, stdout }) : reject(new Error(`exit ${code}: ${stderr}`)),
    );
    child.stdin.end(input);
  });
}

const other = otherNode();

describe('started by another Node than the installed one', () => {
  let dir = '';
  let started: ChildProcess | undefined;
  const noted: number[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-lifecycle-'));
  });
  after(async () => {
    // Whatever a failed test left: the started process and what it started.
    for (const pid of [...(started?.pid ? [started.pid] : []), ...noted])
      if (processRuns(pid)) process.kill(pid, 'SIGKILL');
    await until(() => noted.every((pid) => !processRuns(pid)), 'the test processes to end', 30_000);
    await rm(dir, { recursive: true, force: true });
  });

  test('a password read from standard input reaches the program run again (user add --password-stdin)', {
    skip: other ? false : `the machine's Node is the installed one (${INSTALLED})`,
  }, async () => {
    const node = other as string;
    await run(node, ['user', 'add', 'bob', '--role', 'Viewer', '--password-stdin', '--data', dir], 'bobs-secret\n');
    const list = await run(node, ['user', 'list', '--data', dir], '');
    assert.match(list.stdout, /^bob\tViewer\tset\t/m);
  });

  test('SIGKILL of the started process: the server and its local agent end, and the port is free again', {
    skip: other ? false : `the machine's Node is the installed one (${INSTALLED})`,
  }, async () => {
    const port = await freePort();
    const child = spawn(other as string, ['bin/millrace', 'serve', '--port', String(port), '--data', dir], {
      cwd: ROOT,
      env: cliEnv({ MILLRACE_ADMIN_API_KEY: KEY }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started = child;
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    // A start on a loaded 2-core machine can take a minute; only a hang fails.
    await until(() => /Millrace serving/.test(out), `the server to serve:\n${out}`, 180_000);
    assert.equal((await httpGet(port, `${JSON_BASE}/Queue/GLOBAL.Default`, KEY)).status, 200);
    await until(() => localAgentPid(dir) !== undefined, 'the local agent to start', 60_000);
    assert.ok(child.pid);
    noted.push(...descendants(child.pid));
    // What runs the server is the installed Node, a child of the started process; the local agent is among them.
    const commands = noted.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'));
    assert.ok(
      commands.some((c) => c[0] === INSTALLED && c.includes('serve')),
      `the server runs again under ${INSTALLED}: ${JSON.stringify(commands)}`,
    );
    assert.ok(noted.includes(localAgentPid(dir) as number), 'the local agent is a descendant');
    // `login` reads the API key from standard input, through the process run again too.
    const url = `http://127.0.0.1:${port}/millrace`;
    const login = await run(other as string, ['login', '--server', url], `${KEY}\n`, { XDG_CONFIG_HOME: dir });
    assert.match(login.stdout, /saved as profile "default"/);

    child.kill('SIGKILL');
    // Bounded only to catch a hang: the server stops at once (its shutdown grace is 10 s).
    await until(() => portFree(port), 'the port to be free', 30_000);
    await until(() => noted.every((pid) => !processRuns(pid)), 'every process the started one ran to end', 30_000);
    const log = out;
    assert.match(log, /SIGTERM received, shutting down/, 'stopped as by a supervisor');
    assert.match(log, /stopped: the parent process .* no job runs/, 'the local agent stopped with its server');
  });
});

describe('the local agent ends with its server', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-lifecycle-'));
  });
  after(async () => {
    await killServers();
    await rm(dir, { recursive: true, force: true });
  });

  test('SIGTERM: the server exits 0 once its local agent has exited', async () => {
    const server = await startServe(['--data', join(dir, 'term')], { MILLRACE_ADMIN_API_KEY: KEY });
    await until(() => localAgentPid(join(dir, 'term')) !== undefined, 'the local agent to start', 60_000);
    const agent = localAgentPid(join(dir, 'term')) as number;
    assert.ok(processRuns(agent));
    assert.equal(await server.stop(), 0, server.output());
    assert.equal(processRuns(agent), false, 'the local agent is gone when the server has exited');
    assert.equal(existsSync(join(dir, 'term', 'agents', 'GLOBAL.Local', 'agent.pid')), false, 'its pid file too');
  });

  test('SIGTERM while a job runs: the server exits, the agent stays for the job, then leaves; the outcome reaches the next start', async () => {
    const data = join(dir, 'staying');
    const gate = join(dir, 'staying.gate');
    const first = await startServe(['--data', data], { MILLRACE_ADMIN_API_KEY: KEY });
    let api = apiClient(first.port, KEY);
    const defined = await api('POST', '/JobDefinition/GLOBAL.UntilGate', {
      JobDefinitionType: 'BASH',
      Script: `while [ ! -e ${gate} ]; do sleep 0.2; done; echo through`,
    });
    assert.equal(defined.status, 201);
    const id = (await api('POST', '/Job/GLOBAL.UntilGate')).json.jobId as number;
    await waitFor(
      'the job to run',
      async () => ((await api('GET', `/Job/${id}`)).json.Status === 'Running' ? true : undefined),
      60_000,
    );
    const agent = localAgentPid(data) as number;

    // The job waits for the gate, which opens only once the server has exited: the server did not wait for it.
    assert.equal(await first.stop(), 0, first.output());
    assert.ok(processRuns(agent), 'the agent stays for its running job');
    assert.match(first.output(), /staying until its job ends/);
    writeFileSync(gate, '');
    await until(() => !processRuns(agent), 'the agent to leave once its job has ended', 30_000);

    const second = await startServe(['--data', data], { MILLRACE_ADMIN_API_KEY: KEY });
    api = apiClient(second.port, KEY);
    const job = await waitFor(
      'the spooled outcome',
      async () => {
        const j = (await api('GET', `/Job/${id}`)).json;
        return j.Status === 'Completed' ? j : undefined;
      },
      60_000,
    );
    assert.equal(job.ReturnCode, 0);
    assert.equal(await second.stop(), 0, second.output());
  });

  test('SIGKILL: the local agent stops by itself', async () => {
    const server = await startServe(['--data', join(dir, 'kill')], { MILLRACE_ADMIN_API_KEY: KEY });
    await until(() => localAgentPid(join(dir, 'kill')) !== undefined, 'the local agent to start', 60_000);
    const agent = localAgentPid(join(dir, 'kill')) as number;
    server.child.kill('SIGKILL');
    await until(() => !processRuns(agent), 'the local agent to stop', 30_000);
    assert.equal(existsSync(join(dir, 'kill', 'agents', 'GLOBAL.Local', 'agent.pid')), false, 'its pid file is gone');
  });
});

describe('a server that cannot listen', () => {
  let dir = '';
  const pg: Array<{ drop(): Promise<void> }> = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-taken-port-'));
  });
  after(async () => {
    for (const db of pg) await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A port another process listens on: the server's own start fails at its last step. */
  async function takenPort(): Promise<{ port: number; release(): Promise<void> }> {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const address = holder.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return { port: address.port, release: () => new Promise((resolve) => holder.close(() => resolve())) };
  }

  for (const database of ['SQLite', 'PostgreSQL'] as const)
    test(`on ${database}: says why and exits 1, leaving nothing running`, {
      skip: database === 'PostgreSQL' && !pgAdminUrl() ? 'no PostgreSQL for tests' : false,
    }, async () => {
      const taken = await takenPort();
      try {
        const args = ['serve', '--port', String(taken.port), '--data', join(dir, database)];
        if (database === 'PostgreSQL') {
          const db = await createPgDatabase();
          pg.push(db);
          args.push('--database', db.url);
        }
        const child = spawn(process.execPath, ['bin/millrace', ...args], {
          cwd: ROOT,
          env: cliEnv({ MILLRACE_ADMIN_API_KEY: KEY }),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
        });
        child.stderr.on('data', (c: Buffer) => {
          out += c.toString();
        });
        const pids = () => (child.pid ? [child.pid, ...descendants(child.pid)] : []);
        const seen = new Set<number>();
        const code = await new Promise<number | null>((resolve) => {
          const poll = setInterval(() => {
            for (const pid of pids()) seen.add(pid);
          }, 100);
          child.once('exit', (c) => {
            clearInterval(poll);
            resolve(c);
          });
          // Bounded only to catch the hang this guards against (the process stayed alive after the error).
          setTimeout(() => child.kill('SIGKILL'), 120_000).unref();
        });
        assert.equal(code, 1, out);
        assert.match(out, /EADDRINUSE/);
        await until(() => [...seen].every((pid) => !processRuns(pid)), 'every process it started to end', 30_000);
      } finally {
        await taken.release();
      }
    });
});
