/**
 * The README, pasted as a new user would (issue 18): every ```sh block of README.md runs, in order, in one bash
 * session, against a fresh `millrace serve` — and a command that fails fails the test.
 *
 * The convention, for everyone who writes README sections:
 * - Each ```sh block is run as written, in a fresh working folder where `bin/` is the repository's and `./data` is
 *   the server's data folder, so `node bin/millrace …` and `cp … data/trusted-keys/` work as they do after
 *   `npm start`. `127.0.0.1:7070` in the text becomes the test server's address.
 * - The blocks share one shell: variables a block sets (`B`, `H`, `JOB=$(…)`) are there for the next ones. The
 *   session starts with `MILLRACE_API_KEY` and `MILLRACE_ADMIN_PASSWORD` set to what the first start printed,
 *   `set -euo pipefail`, and `curl` failing on any HTTP status of 400 or more (`--fail-with-body`): a block shows
 *   success unless it says otherwise (`|| echo refused` where a failure is the point).
 * - A block that cannot run here (installing, an agent on another machine, anything that runs forever) is opted
 *   out with the line `<!-- readme-test: skip -->` right before it (blank lines between are fine).
 * - Wait for a job with a loop on its status (`until … jq -e '.Status == "Completed"' …; do sleep 1; done`), never a
 *   fixed sleep: the test has minutes, a loaded machine may need them.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
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
process.once('SIGTERM', () => {
  for (const c of children) c.kill('SIGKILL');
  process.exit(143);
});

function runBash(text: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-s'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
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
    child.on('close', (code) => {
      children.delete(child);
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
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
    // As `npm start` runs it (./data of the working folder), on a free port, with no admin secrets given.
    server = await startServe(['--data', join(work, 'data')]);
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

  test('the first start prints the generated admin credentials once', () => {
    assert.match(server.output(), /First start: administrator "admin" created/);
    assert.match(server.output(), /password: \S{12,}/);
    assert.match(server.output(), /API key: +mr_\S{40,}/);
  });

  test('every shell block runs, in order, and every request succeeds', async () => {
    const key = /API key: +(\S+)/.exec(server.output())?.[1] as string;
    const password = /password: +(\S+)/.exec(server.output())?.[1] as string;
    assert.ok(blocks.filter((b) => !b.skipped).length >= 10, 'the README has runnable examples');
    const { code, output } = await runBash(
      script(blocks, server.port),
      work,
      cliEnv({ MILLRACE_API_KEY: key, MILLRACE_ADMIN_PASSWORD: password }),
    );
    const last = [...output.matchAll(/### (README[^\n]*)/g)].at(-1)?.[1];
    assert.equal(code, 0, `failed after "${last}":\n${output.slice(-3000)}`);
    assert.equal(last, 'README done');
  });
});
