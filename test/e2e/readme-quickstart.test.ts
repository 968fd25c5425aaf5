import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT, type ServeProcess, startServe, suiteDataDir } from '../helpers/cli.ts';

const run = promisify(execFile);

/** The shell lines of the README's fenced `sh` blocks, in order. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] as string).split('\n').filter(Boolean));
}

describe('the README, tried as a new user would', () => {
  const dataDir = suiteDataDir('readme');
  let server: ServeProcess;
  before(async () => {
    // As `npm start` runs it, on a free port instead of 7070 and with no admin secrets in the environment.
    server = await startServe(['--data', dataDir()]);
  });

  test('shows the two commands first: start the server, run the tests', () => {
    const [first, second] = readmeCommands();
    assert.equal(first, 'npm install && npm start');
    assert.equal(second, 'npm test');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, 'node bin/millrace serve');
  });

  test('the first start prints the generated admin credentials once', () => {
    assert.match(server.output(), /First start: administrator "admin" created/);
    assert.match(server.output(), /password: \S{12,}/);
    assert.match(server.output(), /API key: +mr_\S{40,}/);
  });

  test('the curl example reads an object with the printed key', async () => {
    const key = /API key: +(\S+)/.exec(server.output())?.[1] as string;
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
