import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { workPaths, type WorkPaths } from '../../../src/agent/scripts.ts';
import { groupGone, WorkFolders } from '../../../src/agent/work-folders.ts';

/** Work folders kept as spares only when nothing can write to them and they hold exactly what the agent made. */

const root = mkdtempSync(join(tmpdir(), 'millrace-work-folders-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A process group that has ended: a process started as its leader, waited for. */
async function endedGroup(): Promise<number> {
  const child = spawn('true', [], { detached: true, stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid ?? 0;
}

/** An attempt's folder as the runner leaves it: made by `prepare`, both logs written. */
function used(folders: WorkFolders): WorkPaths {
  const paths = workPaths(root, ++n, 1);
  folders.prepare(paths);
  writeFileSync(paths.stdout, 'out\n');
  writeFileSync(paths.stderr, 'err\n');
  return paths;
}

describe('work folders', () => {
  test('a usual folder whose group has ended is the next attempt’s, with empty logs and an empty files/', async () => {
    const folders = new WorkFolders(root);
    const first = used(folders);
    const inode = statSync(first.dir).ino;
    await folders.release(first, await endedGroup());
    assert.equal(existsSync(first.dir), false);
    assert.equal(folders.spareCount, 1);
    const next = workPaths(root, ++n, 1);
    folders.prepare(next);
    assert.equal(statSync(next.dir).ino, inode, 'the same folder');
    assert.equal(folders.spareCount, 0);
    assert.deepEqual(readdirSync(next.dir).sort(), ['files', 'stderr.log', 'stdout.log']);
    assert.deepEqual(readdirSync(next.files), []);
    assert.equal(statSync(next.stdout).size, 0);
    assert.equal(statSync(next.stderr).size, 0);
  });

  const spoiled: [string, (paths: WorkPaths) => void][] = [
    ['something else in the folder', (p) => writeFileSync(join(p.dir, 'stray'), '')],
    ['a job file', (p) => writeFileSync(join(p.files, 'report.csv'), 'a\n')],
    ['a log with other permissions', (p) => chmodSync(p.stdout, 0o600)],
    ['a folder with other permissions', (p) => chmodSync(p.dir, 0o700)],
    ['a log linked elsewhere', (p) => linkSync(p.stderr, join(root, `link-${n}`))],
    [
      'a log replaced by a link',
      (p) => {
        rmSync(p.stdout);
        symlinkSync('/dev/null', p.stdout);
      },
    ],
    ['a missing log', (p) => rmSync(p.stderr)],
  ];
  for (const [what, spoil] of spoiled)
    test(`is deleted, not kept, with ${what}`, async () => {
      const folders = new WorkFolders(root);
      const paths = used(folders);
      spoil(paths);
      await folders.release(paths, await endedGroup());
      assert.equal(existsSync(paths.dir), false);
      assert.equal(folders.spareCount, 0);
    });

  test('is deleted while a process of its group runs, and when no group is known', async () => {
    const folders = new WorkFolders(root);
    const sleeper = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    const group = sleeper.pid ?? 0;
    try {
      assert.equal(groupGone(group), false);
      const paths = used(folders);
      await folders.release(paths, group);
      assert.equal(existsSync(paths.dir), false);
      const inAgent = used(folders);
      await folders.release(inAgent, undefined);
      assert.equal(existsSync(inAgent.dir), false);
      assert.equal(folders.spareCount, 0);
    } finally {
      process.kill(-group, 'SIGKILL');
    }
    await new Promise((resolve) => sleeper.once('exit', resolve));
    assert.equal(groupGone(group), true);
  });

  test('an attempt whose folder exists already with something in it keeps it; the spare is deleted', async () => {
    const folders = new WorkFolders(root);
    await folders.release(used(folders), await endedGroup());
    assert.equal(folders.spareCount, 1);
    const paths = workPaths(root, ++n, 1);
    mkdirSync(paths.dir);
    writeFileSync(join(paths.dir, 'there'), '');
    folders.prepare(paths);
    assert.equal(folders.spareCount, 0);
    assert.deepEqual(readdirSync(paths.dir).sort(), ['files', 'there']);
    const spares = () => readdirSync(root).filter((name) => name.startsWith('.spare-'));
    for (let i = 0; i < 100 && spares().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(spares(), []);
  });
});
