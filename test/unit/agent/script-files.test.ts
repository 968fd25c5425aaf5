import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ScriptFiles } from '../../../src/agent/script-files.ts';
import { removeWorkFolder, workPaths } from '../../../src/agent/scripts.ts';

/** BASH and SH script files shared by content: one file per text, and always the server's text when it runs. */

const root = mkdtempSync(join(tmpdir(), 'millrace-scripts-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const files = new ScriptFiles(join(root, String(++n)));
  files.sweep();
  return files;
};

describe('shared script files', () => {
  test('the same text runs the same read-only file; another text gets its own', () => {
    const files = fresh();
    const a = files.fileFor('echo one\n', 'bash');
    const inode = statSync(a).ino;
    assert.equal(files.fileFor('echo one\n', 'bash'), a);
    assert.equal(statSync(a).ino, inode, 'not written again');
    assert.equal(statSync(a).mode & 0o777, 0o400);
    const b = files.fileFor('echo two\n', 'bash');
    assert.notEqual(b, a);
    assert.equal(readFileSync(a, 'utf8'), 'echo one\n');
    assert.equal(readFileSync(b, 'utf8'), 'echo two\n');
    assert.notEqual(files.fileFor('echo one\n', 'sh'), a, 'another type, another file');
    assert.equal(readdirSync(join(root, String(n))).length, 3, 'no temporary file is left');
  });

  test('a file a job changed or removed is written anew with the text it must hold', () => {
    const files = fresh();
    const a = files.fileFor('exit 0\n', 'bash');
    chmodSync(a, 0o600);
    writeFileSync(a, 'exit 7\n');
    assert.equal(readFileSync(files.fileFor('exit 0\n', 'bash'), 'utf8'), 'exit 0\n');
    assert.equal(statSync(a).mode & 0o777, 0o400);
    chmodSync(a, 0o600);
    rmSync(a);
    assert.equal(readFileSync(files.fileFor('exit 0\n', 'bash'), 'utf8'), 'exit 0\n');
    rmSync(join(root, String(n)), { recursive: true });
    assert.equal(readFileSync(files.fileFor('exit 0\n', 'bash'), 'utf8'), 'exit 0\n', 'even the folder was gone');
  });

  test('the sweep at start empties the folder', () => {
    const files = fresh();
    files.fileFor('true\n', 'sh');
    const again = new ScriptFiles(join(root, String(n)));
    again.sweep();
    assert.deepEqual(readdirSync(join(root, String(n))), []);
    assert.equal(readFileSync(again.fileFor('true\n', 'sh'), 'utf8'), 'true\n');
  });
});

describe('work folder removal', () => {
  const folder = (name: string) => {
    const paths = workPaths(join(root, 'work'), 1, Number(name));
    mkdirSync(paths.files, { recursive: true });
    writeFileSync(paths.stdout, 'out');
    writeFileSync(paths.stderr, '');
    return paths;
  };

  test('goes whole, whether it is the usual one, holds more, or is half gone already', async () => {
    const usual = folder('1');
    const more = folder('2');
    writeFileSync(join(more.files, 'report.csv'), 'a,b\n');
    writeFileSync(more.out, 'X=1\n');
    const half = folder('3');
    rmSync(half.stdout);
    for (const paths of [usual, more, half]) await removeWorkFolder(paths);
    await removeWorkFolder(usual);
    assert.deepEqual(readdirSync(join(root, 'work')), []);
  });
});
