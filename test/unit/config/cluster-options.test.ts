import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { test } from 'node:test';
import { serverList } from '../../../src/agent/servers.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { nodeIdentity } from '../../../src/engine/cluster.ts';

test('the options of several nodes: node id, timer lease and where job files go, each checked', () => {
  const c = loadConfig(
    {},
    { MILLRACE_NODE_ID: 'eu-1:7070', MILLRACE_TIMER_LEASE: '3', MILLRACE_JOB_FILES: 'database' },
  );
  assert.deepEqual([c.nodeId, c.timerLeaseMs, c.jobFilesDir], ['eu-1:7070', 3000, 'database']);
  const d = loadConfig({}, {});
  assert.deepEqual(
    [d.nodeId, d.timerLeaseMs, d.jobFilesDir, d.migrateBesideOlderNodes],
    [undefined, 10_000, undefined, false],
  );
  assert.ok(isAbsolute(loadConfig({}, { MILLRACE_JOB_FILES: 'shared/jobfiles' }).jobFilesDir as string));
  assert.throws(
    () => loadConfig({}, { MILLRACE_NODE_ID: 'a b' }),
    /invalid MILLRACE_NODE_ID.*"a b" is not 1-100 letters/,
  );
  assert.throws(() => loadConfig({}, { MILLRACE_NODE_ID: 'x'.repeat(101) }), /invalid MILLRACE_NODE_ID/);
  assert.throws(
    () => loadConfig({}, { MILLRACE_TIMER_LEASE: '1' }),
    /MILLRACE_TIMER_LEASE.*"1" is not a whole number from 2 to 3600/,
  );
  assert.throws(() => loadConfig({}, { MILLRACE_TIMER_LEASE: 'ten' }), /MILLRACE_TIMER_LEASE/);
});

test("an agent's --server: one URL or several, comma-separated; one that is not a URL is refused by name", () => {
  assert.deepEqual(
    serverList('http://a:1/millrace, http://b:2/millrace,').map((u) => u.href),
    ['http://a:1/millrace', 'http://b:2/millrace'],
  );
  assert.throws(() => serverList('http://a:1/millrace,not a url'), /"not a url" is not a URL/);
  assert.throws(() => serverList(' , '), /no server URL given/);
});

test("a node's id is kept in its data folder, so a restart is the same node; a given id wins", () => {
  const dir = mkdtempSync(join(tmpdir(), 'millrace-node-id-'));
  try {
    const first = nodeIdentity(dir);
    assert.match(first, /^.+-[0-9a-f]{6}$/);
    assert.equal(nodeIdentity(dir), first);
    assert.equal(readFileSync(join(dir, 'node-id'), 'utf8').trim(), first);
    assert.equal(nodeIdentity(dir, 'n7'), 'n7');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
