import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULTS, interfacePaths } from '../../src/config/config.ts';
import type { Backend } from './backends.ts';
import { killAll, type NotedProcess, processesOf } from './processes.ts';
import { type ApiResponse, apiClient, freePort } from './http-client.ts';

/** The repository root: `node bin/millrace` runs from here. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Path of the JSON interface's base with the default context and vendor. */
export const JSON_BASE = interfacePaths(DEFAULTS).jsonBase;

/**
 * The environment for a child `millrace`: the test process's own without any MILLRACE_* setting (so a
 * developer's shell cannot change what a test sees) and without node:test's marker, plus `extra`.
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('MILLRACE_') && name !== 'NODE_TEST_CONTEXT') env[name] = value;
  return { ...env, ...extra };
}

export interface CliResult {
  /** Exit code; non-zero also when the program was killed. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/millrace <args>` to completion (killed after `timeoutMs`, 120 s unless given: a hang, not a slow machine). */
export function runCli(
  args: readonly string[],
  extraEnv: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/millrace', ...args],
      { cwd: ROOT, env: cliEnv(extraEnv), timeout: timeoutMs, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

export interface ServeProcess {
  child: ChildProcess;
  port: number;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  /** Sends SIGTERM and resolves with the exit code once the process is gone (SIGKILL after 10 s). */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcess>();
/**
 * Processes a stopped server left behind: its local agent stays while jobs run (docs/architecture.md §7), and
 * those jobs. Killed with the servers after the tests, before their folders go.
 */
const strays: NotedProcess[] = [];

/** Notes the processes `child` started, with their start times, to kill them with the servers. */
function noteStrays(child: ChildProcess): void {
  if (child.pid !== undefined) strays.push(...processesOf(child.pid));
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Starts `node bin/millrace serve --port 0 <args>` and resolves once it logs the URL it serves. */
export function startServe(args: readonly string[], extraEnv: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['bin/millrace', 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    env: cliEnv(extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  const stop = async (): Promise<number | null> => {
    const done = exited(child);
    noteStrays(child);
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    try {
      return await done;
    } finally {
      clearTimeout(force);
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`millrace serve did not report its URL within 180 s:\n${out}`));
      // Generous: a start on a loaded 2-core machine (route schemas compiled, key hashing, migrations) took up to a
      // minute here (load average 18); only a hang should fail.
    }, 180_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Millrace serving https?:\/\/127\.0\.0\.1:(\d+)\/millrace/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), output: () => out, stop });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`millrace serve exited (${code ?? signal}) before serving:\n${out}`));
    });
  });
}

/**
 * Kills (SIGKILL) every server started by startServe that is still running, with every process it started (its
 * local agent, the jobs still running) and those a stopped one left, and waits until they are all gone: nothing
 * writes into a data folder the test removes next.
 */
export async function killServers(): Promise<void> {
  for (const child of running) noteStrays(child);
  await Promise.all(
    [...running].map((child) => {
      const done = exited(child);
      child.kill('SIGKILL');
      return done;
    }),
  );
  await killAll(strays.splice(0));
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON the server answers
  json: any;
}

/** A GET over a new connection (no keep-alive, so nothing holds a server open) on 127.0.0.1:`port`. */
export function httpGet(port: number, path: string, apiKey?: string): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'GET', agent: false, headers: apiKey ? { 'X-API-Key': apiKey } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => {
          let json: unknown;
          try {
            json = body ? JSON.parse(body) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * A fresh data folder for the enclosing `describe`: made before its tests, and removed after them once every
 * server started by `startServe` is gone. Returns a getter, since the folder exists only once `before` ran.
 */
export function suiteDataDir(prefix: string): () => string {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), `millrace-${prefix}-`));
  });
  after(async () => {
    await killServers();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/** A `millrace serve` on a fresh database of the enclosing `describe` (see suiteServer). */
export interface SuiteServer {
  /** The database and data folder (set once `before` ran). */
  readonly db: Awaited<ReturnType<Backend['create']>>;
  /** The port it listens on, the same for every start. */
  readonly port: number;
  /** The process of the latest start. */
  readonly serve: ServeProcess;
  /** Starts (again) `millrace serve` on the database and port. */
  start(): Promise<void>;
  /** A JSON request with the admin key (`env.MILLRACE_ADMIN_API_KEY`). */
  api(method: string, path: string, body?: unknown): Promise<ApiResponse>;
}

/**
 * For the enclosing `describe`: a fresh database of `backend` and a port, `millrace serve` started on them before
 * its tests with `env` (the admin's key and password), and after them every server killed and the database dropped.
 */
export function suiteServer(backend: Backend, env: { MILLRACE_ADMIN_API_KEY: string } & Record<string, string>) {
  let db: SuiteServer['db'] | undefined;
  let port = 0;
  let serve: ServeProcess | undefined;
  const set = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`suiteServer: no ${what} before the suite's before() ran`);
    return v;
  };
  const s: SuiteServer = {
    get db() {
      return set(db, 'database');
    },
    get port() {
      return port;
    },
    get serve() {
      return set(serve, 'server');
    },
    async start() {
      const d = set(db, 'database');
      serve = await startServe(
        ['--data', d.dataDir, '--port', String(port), ...(d.databaseUrl ? ['--database', d.databaseUrl] : [])],
        env,
      );
    },
    api: (method, path, body) => apiClient(port, env.MILLRACE_ADMIN_API_KEY)(method, path, body),
  };
  before(async () => {
    db = await backend.create();
    port = await freePort();
    await s.start();
  });
  after(async () => {
    await killServers();
    await db?.cleanup();
  });
  return s;
}
