import assert from 'node:assert/strict';
import { appendFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { FileWatch } from '../../../src/domain/file-watch.ts';
import type { RaiseMessage, WatchStatusMessage } from '../../../src/agent/protocol.ts';
import { agentSuite, killAgent, startAgent } from '../../helpers/agent-peer.ts';
import { pause } from '../../helpers/jobs.ts';
import { until } from '../../helpers/processes.ts';

/** A watch as the server sends it: polled every second, a file counts after a second unchanged. */
const watch = (directory: string, extra: Partial<FileWatch> = {}): FileWatch => ({
  definition: 'GLOBAL.Arrived',
  directory,
  pattern: '*.csv',
  pollSeconds: 1,
  stableSeconds: 1,
  moveDirectory: null,
  ...extra,
});

describe('agent: file watches (real agent process, real files)', () => {
  const suite = agentSuite();
  const raises = (connection = 0): RaiseMessage[] =>
    suite
      .peer()
      .received.filter((r) => r.connection > connection && r.message.type === 'raise')
      .map((r) => r.message as RaiseMessage);

  it('raises each matching file once it is stable, a slowly written one only once it is complete', async () => {
    const peer = suite.peer();
    const root = join(suite.dir(), 'root1');
    const inbox = join(root, 'in');
    await mkdir(inbox, { recursive: true });
    const agent = await startAgent(peer, suite.dir(), {
      dataDir: join(suite.dir(), 'a1'),
      args: ['--watch-root', root],
    });
    const from = peer.connections - 1;
    peer.send({ type: 'watch', watches: [watch(inbox)] });
    await writeFile(join(inbox, 'whole.csv'), 'a,b\n1,2\n');
    await writeFile(join(inbox, 'other.txt'), 'not matched\n');
    // Written in pieces over 3 s, each within a second of the one before: never unchanged for StableSeconds.
    const slow = join(inbox, 'slow.csv');
    for (let i = 0; i < 12; i++) {
      await appendFile(slow, `line ${i}\n`);
      await pause(250);
    }
    const done = await stat(slow, { bigint: true });
    await until(() => raises(from).some((r) => r.path === slow), 'the slow file to be raised');
    await until(() => raises(from).some((r) => r.path === join(inbox, 'whole.csv')), 'the whole file to be raised');
    for (const r of raises(from)) peer.send({ type: 'raised', id: r.id });
    await pause(2500); // more looks at the folder: nothing is offered again
    const seen = raises(from);
    assert.deepEqual(seen.map((r) => r.path).sort(), [slow, join(inbox, 'whole.csv')]);
    const slowRaise = seen.find((r) => r.path === slow) as RaiseMessage;
    assert.equal(slowRaise.size, Number(done.size), 'raised with its final size, not part of it');
    assert.equal(slowRaise.mtime, Number(done.mtimeMs));
    assert.equal(slowRaise.inode, String(done.ino));
    await killAgent(agent);
  });

  it('keeps a raise until the server acknowledges it: SIGKILLed and restarted, it raises it again', async () => {
    const peer = suite.peer();
    const root = join(suite.dir(), 'root2');
    await mkdir(root, { recursive: true });
    const dataDir = join(suite.dir(), 'a2');
    const first = await startAgent(peer, suite.dir(), { dataDir, args: ['--watch-root', root] });
    const c1 = peer.connections - 1;
    peer.send({ type: 'watch', watches: [watch(root, { stableSeconds: 0 })] });
    await writeFile(join(root, 'x.csv'), 'x\n');
    await until(() => raises(c1).length > 0, 'the raise');
    const sent = raises(c1)[0] as RaiseMessage;
    await killAgent(first); // no `raised` came

    const c2 = peer.connections;
    const second = await startAgent(peer, suite.dir(), { dataDir, args: ['--watch-root', root] });
    // Sent again from its spool after the welcome, before the server told it what to watch.
    await until(() => raises(c2).some((r) => r.id === sent.id), 'the raise sent again');
    assert.deepEqual(raises(c2)[0], sent);
    peer.send({ type: 'raised', id: sent.id });
    await until(
      async () => (await readFile(join(dataDir, 'spool', 'raises'), 'utf8')).includes('"removed":true'),
      'the ack in the spool',
    );
    await killAgent(second);
  });

  it('moves a stable file into MoveDirectory and raises it with its new path', async () => {
    const peer = suite.peer();
    const root = join(suite.dir(), 'root3');
    const inbox = join(root, 'in');
    const done = join(root, 'done');
    await mkdir(inbox, { recursive: true });
    await mkdir(done, { recursive: true });
    const agent = await startAgent(peer, suite.dir(), {
      dataDir: join(suite.dir(), 'a3'),
      args: ['--watch-root', root],
    });
    const from = peer.connections - 1;
    peer.send({ type: 'watch', watches: [watch(inbox, { moveDirectory: done })] });
    await writeFile(join(inbox, 'm.csv'), 'm\n');
    await until(() => raises(from).length > 0, 'the raise');
    const r = raises(from)[0] as RaiseMessage;
    assert.equal(r.path, join(done, 'm.csv'));
    assert.equal(await readFile(join(done, 'm.csv'), 'utf8'), 'm\n');
    await assert.rejects(stat(join(inbox, 'm.csv')), { code: 'ENOENT' });
    await killAgent(agent);
  });

  it('refuses a folder outside its --watch-root folders, and every folder without one, saying why', async () => {
    const peer = suite.peer();
    const root = join(suite.dir(), 'root4');
    const outside = join(suite.dir(), 'elsewhere');
    await mkdir(root, { recursive: true });
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'secret.csv'), 'no\n');
    const status = (from: number) =>
      peer.received
        .filter((x) => x.connection > from && x.message.type === 'watchStatus')
        .map((x) => (x.message as WatchStatusMessage).watches[0])
        .find((w) => w?.lastError);

    const a = await startAgent(peer, suite.dir(), { dataDir: join(suite.dir(), 'a4'), args: ['--watch-root', root] });
    let from = peer.connections - 1;
    peer.send({ type: 'watch', watches: [watch(outside, { stableSeconds: 0 })] });
    await until(() => status(from) !== undefined, 'a status with the error');
    assert.equal(status(from)?.lastError, `${outside} is not inside a --watch-root folder of this agent (${root})`);
    await killAgent(a);

    await startAgent(peer, suite.dir(), { dataDir: join(suite.dir(), 'a5') });
    from = peer.connections - 1;
    peer.send({ type: 'watch', watches: [watch(outside, { stableSeconds: 0 })] });
    await until(() => status(from) !== undefined, 'a status with the error');
    assert.match(status(from)?.lastError ?? '', /started without --watch-root, so it watches no folder/);
    await pause(1500);
    assert.equal(raises(0).filter((r) => r.path.startsWith(outside)).length, 0, 'nothing outside is raised');
  });
});
