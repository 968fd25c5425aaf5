import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

const ROOT = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

/** The shell lines of the README's fenced `sh` blocks, in order. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] as string).split('\n').filter(Boolean));
}

/** Starts `millrace serve` as `npm start` would, on a free port, and resolves once it logs its URL. */
function startServer(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; port: number; stdout: () => string }> {
  const child = spawn(process.execPath, ['bin/millrace', 'serve', '--data', dataDir, '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Millrace serving http:\/\/127\.0\.0\.1:(\d+)\/millrace/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), stdout: () => out });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
}

describe('the README, tried as a new user would', () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'millrace-readme-'));
    server = await startServer(dataDir, { MILLRACE_ADMIN_API_KEY: undefined, MILLRACE_ADMIN_PASSWORD: undefined });
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await new Promise((r) => server?.child.once('exit', r));
    await rm(dataDir, { recursive: true, force: true });
  });

  test('shows the two commands first: start the server, run the tests', () => {
    const [first, second] = readmeCommands();
    assert.equal(first, 'npm install && npm start');
    assert.equal(second, 'npm test');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, 'node bin/millrace serve');
  });

  test('the first start prints the generated admin credentials once', () => {
    assert.match(server.stdout(), /First start: administrator "admin" created/);
    assert.match(server.stdout(), /password: \S{12,}/);
    assert.match(server.stdout(), /API key: +mr_\S{40,}/);
  });

  test('the curl example reads an object with the printed key', async () => {
    const key = /API key: +(\S+)/.exec(server.stdout())?.[1] as string;
    const curl = readmeCommands().find((c) => c.startsWith('curl ') && c.includes('/Queue/GLOBAL.Default'));
    assert.ok(curl, 'README has the curl example');
    // The example as written, with the port this test's server got instead of the default 7070.
    const { stdout } = await run('bash', ['-c', curl.replace(':7070/', `:${server.port}/`)], {
      env: { ...process.env, MILLRACE_API_KEY: key },
    });
    const queue = JSON.parse(stdout) as Record<string, unknown>;
    assert.equal(queue.businessKey, 'Queue:GLOBAL.Default');
    assert.equal(queue.Name, 'Default');
  });
});
