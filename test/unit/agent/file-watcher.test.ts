import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FileWatcher } from '../../../src/agent/file-watcher.ts';
import type { RaiseMessage } from '../../../src/agent/protocol.ts';
import { RaiseSpool } from '../../../src/agent/raise-spool.ts';

/**
 * The agent spools a file's raise before it moves the file (a crash after the move must still raise it), and the
 * agent's timer sends every raise not yet acknowledged again. While the move runs, that timer must not send the
 * spooled raise: when the move fails, the file is not raised (an operator message says why instead).
 */

const root = mkdtempSync(join(tmpdir(), 'millrace-file-watcher-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('a raise spooled ahead of a move that fails is never sent, even by a resend during the move', async () => {
  const inbox = join(root, 'in');
  const spoolDir = join(root, 'spool');
  mkdirSync(inbox);
  mkdirSync(spoolDir);
  // Several files, so that the resends below fall inside several moves, each of them failing (no such folder).
  const files = ['a.csv', 'b.csv', 'c.csv', 'd.csv', 'e.csv', 'f.csv', 'g.csv', 'h.csv'];
  for (const name of files) writeFileSync(join(inbox, name), 'x\n');
  const sent: RaiseMessage[] = [];
  const told = new Set<string>();
  let allTold = () => {};
  const everyFileTold = new Promise<void>((resolve) => {
    allTold = resolve;
  });
  const spool = new RaiseSpool(spoolDir);
  const watcher = new FileWatcher({
    roots: [root],
    spool,
    log: () => {},
    send: (m) => {
      if (m.type !== 'raise') return true;
      sent.push(m);
      if (m.moveError !== undefined) told.add(m.path);
      if (told.size === files.length) allTold();
      return true;
    },
  });
  // The agent's timer, at every turn of the event loop while the watch looks at its folder.
  let resending = true;
  const resend = () => {
    watcher.resend();
    if (resending) setImmediate(resend);
  };
  setImmediate(resend);
  try {
    watcher.update([
      {
        definition: 'GLOBAL.Stuck',
        directory: inbox,
        pattern: '*',
        pollSeconds: 3600,
        stableSeconds: 0,
        moveDirectory: join(root, 'no-such-folder'),
      },
    ]);
    await everyFileTold; // the look sends its operator messages once it has tried every move
  } finally {
    resending = false;
    watcher.stop();
  }
  const raised = sent.filter((m) => m.moveError === undefined);
  assert.deepEqual(
    raised.map((m) => m.path),
    [],
    'no file that could not be moved is raised',
  );
  assert.deepEqual(
    [...new Set(sent.map((m) => m.path))].sort(),
    files.map((name) => join(inbox, name)),
    'each file is told as not moved, from where it stays (again at each resend until acknowledged)',
  );
  assert.deepEqual(
    spool.pending().map((r) => r.moveError !== undefined),
    files.map(() => true),
    'the spool holds only the operator messages, until the server acknowledges them',
  );
  spool.close();
});
