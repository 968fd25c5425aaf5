import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { type LoadedEntry, readSpool, Spool } from '../../../src/agent/spool.ts';

/** The agent's spool: one journal of JSON lines, read back at start as the last line of each attempt says. */

const root = mkdtempSync(join(tmpdir(), 'millrace-spool-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, String(++n));
const summary = (entries: LoadedEntry[]) =>
  entries.map((l) => (l.ok ? `${l.entry.jobId}.${l.entry.attempt} ${l.entry.state}` : `${l.jobId}.${l.attempt} lost`));
const report = (jobId: number) => ({
  type: 'finished' as const,
  jobId,
  attempt: 1,
  startTime: 1,
  endTime: 2,
  returnCode: 0,
  signal: null,
  killed: false,
  out: {},
  files: [],
});

describe('agent spool journal', () => {
  test('what was written and not removed is read back by the next agent, oldest job first', async () => {
    const dir = fresh();
    const spool = new Spool(dir);
    assert.deepEqual(spool.load(), []);
    spool.write({ jobId: 9, attempt: 1, state: 'running' });
    spool.write({ jobId: 3, attempt: 2, state: 'running' });
    spool.write({ jobId: 9, attempt: 1, state: 'running', pid: 77, startTime: 5 }, false);
    spool.write({ jobId: 3, attempt: 2, state: 'finished', finished: report(3) });
    spool.write({ jobId: 4, attempt: 1, state: 'running' });
    spool.remove(4, 1);
    await spool.flushed();
    const again = new Spool(dir).load();
    assert.deepEqual(summary(again), ['3.2 finished', '9.1 running']);
    assert.deepEqual(again[1], { ok: true, entry: { jobId: 9, attempt: 1, state: 'running', pid: 77, startTime: 5 } });
    assert.deepEqual(readdirSync(join(dir, 'spool')), ['journal'], 'one file, whatever the number of jobs');
  });

  test('a line cut short by a crash is read as that attempt lost; the files of an older agent are taken in', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'spool'), { recursive: true });
    writeFileSync(join(dir, 'spool', '5.1.json'), JSON.stringify({ jobId: 5, attempt: 1, state: 'running' }));
    writeFileSync(join(dir, 'spool', '6.1.json'), '{"jobId":6,"att');
    writeFileSync(join(dir, 'spool', '7.1.json.tmp'), '{}');
    appendFileSync(
      join(dir, 'spool', 'journal'),
      '{"jobId":8,"attempt":1,"state":"running"}\n{"jobId":8,"attempt":1,"st',
    );
    assert.deepEqual(summary(readSpool(join(dir, 'spool'))), ['5.1 running', '6.1 lost', '8.1 lost'], 'read only');
    const spool = new Spool(dir);
    assert.deepEqual(summary(spool.load()), ['5.1 running', '6.1 lost', '8.1 lost']);
    assert.deepEqual(readdirSync(join(dir, 'spool')), ['journal']);
    // Kept as started and not finished (what the next agent reads as lost) until the server acknowledges them.
    spool.remove(6, 1);
    assert.deepEqual(summary(readSpool(join(dir, 'spool'))), ['5.1 running', '8.1 running']);
  });

  test('the journal is rewritten with its live entries once it has grown well beyond them', () => {
    const dir = fresh();
    const spool = new Spool(dir);
    spool.load();
    spool.write({ jobId: 1, attempt: 1, state: 'running' }, false);
    for (let id = 2; id < 8000; id++) {
      spool.write({ jobId: id, attempt: 1, state: 'running' }, false);
      spool.write({ jobId: id, attempt: 1, state: 'finished', finished: report(id) }, false);
      spool.remove(id, 1);
    }
    const size = statSync(join(dir, 'spool', 'journal')).size;
    assert.ok(size < 1024 * 1024, `the journal holds ${size} bytes`);
    assert.deepEqual(summary(readSpool(join(dir, 'spool'))), ['1.1 running']);
  });
});
