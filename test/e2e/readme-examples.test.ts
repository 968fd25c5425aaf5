/**
 * The README, pasted as a new user would: every ```sh block of README.md runs, in order, in one bash
 * session, against a fresh `millrace serve` — and a command that fails fails the test.
 *
 * The convention, for everyone who writes README sections:
 * - Each ```sh block is run as written, in a fresh working folder where `bin/` is the repository's, `./data` is
 *   the server's data folder and `./admin.env` the file of its `--initial-secrets`, as after the Quick start's
 *   `npm start -- --initial-secrets admin.env`. `127.0.0.1:7070` in the text becomes the test server's address.
 * - The blocks share one shell: variables a block sets (`B`, `H`, `JOB=$(…)`, `PATH`) are there for the next ones.
 *   The session starts with no MILLRACE_* variable (the README's first block reads them from `admin.env`), a
 *   configuration folder of its own (`millrace login` writes there), `set -euo pipefail`, and `curl` failing on any
 *   HTTP status of 400 or more (`--fail-with-body`): a block shows success unless it says otherwise (`|| echo
 *   refused` where a failure is the point).
 * - What a block starts in the background (`… &`, an agent) runs until the end; then the shell's whole process group
 *   is stopped, so nothing outlives the test.
 * - A block that cannot run here (installing, the suite itself, other machines) is opted out with the line
 *   `<!-- readme-test: skip -->` right before it (blank lines between are fine). Anything that runs forever is
 *   written with a bound instead (`curl --max-time 3 … || [ $? -eq 28 ]`).
 * - Wait for a job with a loop on its status (`until … jq -e '.Status == "Completed"' …; do sleep 1; done`), never a
 *   fixed sleep: the test has minutes, a loaded machine may need them.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliEnv, killServers, ROOT, type ServeProcess, startServe } from '../helpers/cli.ts';

const SKIP_MARKER = '<!-- readme-test: skip -->';

interface ReadmeBlock {
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  skipped: boolean;
}

/** The ```sh blocks of a Markdown text, in order, each marked skipped when the marker precedes it. */
function shellBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== '```sh') continue;
    let k = i - 1;
    while (k >= 0 && lines[k]?.trim() === '') k--;
    const skipped = lines[k]?.trim() === SKIP_MARKER;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]?.trim() !== '```'; i++) body.push(lines[i] as string);
    blocks.push({ line: start + 1, text: body.join('\n'), skipped });
  }
  return blocks;
}

/** One bash script: a prelude, then each block after a marker line naming it, so a failure says where. */
function script(blocks: readonly ReadmeBlock[], port: number): string {
  const prelude = [
    'set -euo pipefail',
    'shopt -s inherit_errexit',
    // Fail on HTTP errors, as a reader would notice one; keep the body (and end it with a newline) so the log says why.
    'curl() { local rc=0; command curl -sS --fail-with-body "$@" || rc=$?; echo; return "$rc"; }',
  ];
  const parts = blocks
    .filter((b) => !b.skipped)
    .map(
      (b) =>
        `echo "### README.md line ${b.line} (at \${SECONDS}s)" >&2\n${b.text.replaceAll('127.0.0.1:7070', `127.0.0.1:${port}`)}`,
    );
  return `${[...prelude, ...parts, 'echo "### README done" >&2'].join('\n')}\n`;
}

/** Children to stop should the runner end this file early (its timeout): nothing of a README run outlives it. */
const children = new Set<{ kill(signal?: NodeJS.Signals): unknown }>();
/** Process groups of README shells: what their blocks started in the background. */
const groups = new Set<number>();
process.once('SIGTERM', () => {
  for (const c of children) c.kill('SIGKILL');
  for (const g of groups) signalGroup(g, 'SIGKILL');
  process.exit(143);
});

/** Signals a process group; false once no process of it is left. */
function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

/** Stops what is left of a README shell's process group (its background agent): TERM, then KILL after 30 s. */
async function stopGroup(group: number): Promise<void> {
  signalGroup(group, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (signalGroup(group, 0)) {
    if (Date.now() > deadline) signalGroup(group, 'SIGKILL');
    await sleep(100);
  }
  groups.delete(group);
}

function runBash(text: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    // A process group of its own (detached), so everything the blocks start can be stopped together.
    const child = spawn('bash', ['-s'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    children.add(child);
    if (child.pid !== undefined) groups.add(child.pid);
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
      // Progress as it happens, so a run cut short by the runner's timeout still shows how far it got.
      for (const m of c.toString().matchAll(/### README[^\n]*/g)) process.stderr.write(`${m[0]}\n`);
    });
    // A generous bound for a loaded machine; the loops in the README wait on conditions, not on time.
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    // `exit`, not `close`: a background process of the blocks holds the pipes open until its group is stopped.
    child.on('exit', (code) => {
      children.delete(child);
      clearTimeout(timer);
      const settle = () => resolve({ code: code ?? 1, output });
      if (child.pid === undefined) settle();
      else stopGroup(child.pid).then(settle, settle);
    });
    child.stdin.end(text);
  });
}

describe('the README, pasted as written', () => {
  let work: string;
  let server: ServeProcess;
  let blocks: ReadmeBlock[];
  before(async () => {
    blocks = shellBlocks(await readFile(join(ROOT, 'README.md'), 'utf8'));
    work = await mkdtemp(join(tmpdir(), 'millrace-readme-'));
    await symlink(join(ROOT, 'bin'), join(work, 'bin'));
    // As the Quick start runs it (./data of the working folder, its secrets to ./admin.env), on a free port.
    server = await startServe(['--data', join(work, 'data'), '--initial-secrets', join(work, 'admin.env')]);
    children.add(server.child);
  });
  after(async () => {
    await server?.stop();
    await killServers(); // a job the examples left running, and the local agent staying for it
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('the skip marker opts a block out, and only a block right after it', () => {
    const md = ['```sh', 'a', '```', SKIP_MARKER, '', '```sh', 'b', '```', 'text', '```sh', 'c', '```'].join('\n');
    assert.deepEqual(
      shellBlocks(md).map((b) => [b.text, b.skipped]),
      [
        ['a', false],
        ['b', true],
        ['c', false],
      ],
    );
  });

  test('the first start writes the generated admin credentials to --initial-secrets (0600), not to the log', async () => {
    const file = join(work, 'admin.env');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const text = await readFile(file, 'utf8');
    const password = /^MILLRACE_ADMIN_PASSWORD=(\S{12,})$/m.exec(text)?.[1];
    const key = /^MILLRACE_API_KEY=(mr_\S{40,})$/m.exec(text)?.[1];
    assert.ok(password && key, text);
    assert.match(server.output(), /First start: administrator "admin" created/);
    assert.match(server.output(), /admin\.env \(mode 0600\)/);
    assert.ok(!server.output().includes(password) && !server.output().includes(key), 'no secret in the log');
    // They are the administrator's: the key reads, the password signs in.
    const base = `http://127.0.0.1:${server.port}/millrace`;
    const read = await fetch(`${base}/api-extension/External/Vendor/Vendor_RestService/rest/v1/Partition/GLOBAL`, {
      headers: { 'X-API-Key': key },
    });
    assert.equal(read.status, 200);
    const xml = await fetch(`${base}/api-rest/version`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` },
    });
    assert.equal(xml.status, 200);
  });

  test("the serving line names the dashboard, and the server's root and context lead there", async () => {
    const url = /Millrace serving (\S+)"/.exec(server.output())?.[1];
    assert.equal(url, `http://127.0.0.1:${server.port}/millrace/ui/`);
    const page = await fetch(url as string);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
    for (const entry of ['/', '/millrace', '/millrace/']) {
      const res = await fetch(`http://127.0.0.1:${server.port}${entry}`, { redirect: 'manual' });
      assert.equal(res.status, 302, entry);
      assert.equal(res.headers.get('location'), '/millrace/ui/', entry);
    }
  });

  test('every shell block runs, in order, and every request succeeds', async () => {
    assert.ok(blocks.filter((b) => !b.skipped).length >= 10, 'the README has runnable examples');
    const skipped = blocks.filter((b) => b.skipped).map((b) => b.text.split('\n')[0]);
    // Only installing, the suite itself, the SQL job (a PostgreSQL server; test/e2e/requests runs it), single sign-on (an
    // identity provider; test/integration/auth/oidc.test.ts runs one), HTTPS (other machines and their certificates;
    // test/e2e/ops/tls-*.test.ts runs it), the several-nodes sketch and the
    // PostgreSQL backup and migration (other machines, a PostgreSQL server) are left out.
    assert.deepEqual(skipped, [
      'npm install && npm start -- --initial-secrets admin.env',
      'npm test',
      `curl -H "$H" -H 'Content-Type: application/json' -X POST $B/Credential/GLOBAL.Sales \\`,
      'node bin/millrace serve --oidc-issuer https://login.example.com/realms/ops --oidc-client-id millrace \\',
      'millrace serve --tls-cert /etc/millrace/tls.crt --tls-key /etc/millrace/tls.key --host 0.0.0.0',
      '# on each machine (same database, same secret key; job files in the database, or in a folder every node mounts)',
      'pg_dump -Fc -f millrace.dump postgres://millrace@db/millrace',
      'systemctl stop millrace                      # or however the SQLite server runs',
    ]);
    const { code, output } = await runBash(
      script(blocks, server.port),
      work,
      cliEnv({ XDG_CONFIG_HOME: join(work, 'config') }),
    );
    const last = [...output.matchAll(/### (README[^\n]*)/g)].at(-1)?.[1];
    assert.equal(code, 0, `failed after "${last}":\n${output.slice(-3000)}`);
    assert.equal(last, 'README done');
  });
});
