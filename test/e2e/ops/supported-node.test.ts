import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../../helpers/cli.ts';

/**
 * Which Node may run Millrace where npm installed none (other platforms, `npm install --omit=optional`): one whose
 * Node-API better-sqlite3's addon is built for, Node 22.14 or later (bin/runtime.mjs). An older one is refused with
 * the reason before anything loads, rather than failing in the driver or crashing.
 */

// bin/runtime.mjs is plain JavaScript for the machine's Node; its rule is imported as `millrace` uses it.
const { unsupportedNode } = (await import(join(ROOT, 'bin', 'runtime.mjs'))) as {
  unsupportedNode(versions?: { node: string; napi?: string }): string | undefined;
};

test('Node 22.14 and later run Millrace; Node 20 and 22 before 22.14 are refused with the version they need', () => {
  for (const versions of [
    { node: '22.14.0', napi: '10' },
    { node: '22.22.0', napi: '10' },
    { node: '24.21.0', napi: '10' },
    { node: '26.0.0', napi: '11' },
  ])
    assert.equal(unsupportedNode(versions), undefined, versions.node);
  for (const versions of [
    { node: '20.20.2', napi: '9' },
    { node: '22.13.1', napi: '9' },
    { node: '18.20.0', napi: '9' },
  ]) {
    const why = unsupportedNode(versions);
    assert.match(why ?? '', new RegExp(`^Node ${versions.node.replaceAll('.', '\\.')} cannot run Millrace`));
    assert.match(why ?? '', /needs Node 22\.14 or later/);
    assert.match(why ?? '', new RegExp(`this Node has ${versions.napi}\\)`));
  }
  assert.equal(unsupportedNode(process.versions), undefined, 'the Node running the tests is supported');
});

const run = promisify(execFile);

/** A Node of the machine that Millrace does not support (here: the one that runs npm), with its versions. */
async function oldMachineNode(): Promise<{ path: string; versions: { node: string; napi: string } } | undefined> {
  const installed = realpathSync(join(ROOT, 'node_modules', '.bin', 'node'));
  for (const path of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(path) || realpathSync(path) === installed) continue;
    const { stdout } = await run(path, ['-p', 'JSON.stringify(process.versions)']);
    const versions = JSON.parse(stdout) as { node: string; napi: string };
    if (unsupportedNode(versions) !== undefined) return { path, versions };
  }
  return undefined;
}

const old = await oldMachineNode();

test('millrace started by an older Node where npm installed none says which Node it needs, and runs nothing', {
  skip: old === undefined && 'no Node older than 22.14 on this machine',
}, async () => {
  if (!old) return;
  // A copy of bin/ alone: a checkout where npm installed no Node of its own (and nothing else either).
  const dir = await mkdtemp(join(tmpdir(), 'millrace-old-node-'));
  try {
    mkdirSync(join(dir, 'bin'));
    for (const name of ['millrace', 'dist.mjs', 'runtime.mjs'])
      copyFileSync(join(ROOT, 'bin', name), join(dir, 'bin', name));
    const started = run(old.path, [join(dir, 'bin', 'millrace'), '--version'], { cwd: dir });
    const failure = await started.then(
      () => assert.fail('millrace ran on an unsupported Node'),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    assert.equal(failure.code, 1);
    assert.equal(failure.stdout, '');
    assert.equal(failure.stderr, `millrace: ${unsupportedNode(old.versions)}\n`);
    assert.match(failure.stderr, /^millrace: Node \d+\.\d+\.\d+ cannot run Millrace: it needs Node 22\.14 or later/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
