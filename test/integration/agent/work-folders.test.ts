import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, killAgent, startAgent } from '../../helpers/agent-peer.ts';
import { pidFrom, processRuns, until } from '../../helpers/processes.ts';

/** Every regular file under `dir`, with its text. */
function filesUnder(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile()) found.set(path, readFileSync(path, 'utf8'));
  }
  return found;
}

/**
 * What each job prints first: what its folder held when it started (its cwd's entries, the sizes of its two logs,
 * the entries of $MILLRACE_FILES). Then a line to each log, so that the folder it leaves has content to clear.
 */
const REPORT = [
  'entries=$(ls -A . | tr "\\n" " ") sizes="$(stat -c %s stdout.log) $(stat -c %s stderr.log)"',
  'files=$(ls -A "$MILLRACE_FILES" | tr "\\n" " ")',
  'echo "entries: $entries"',
  'echo "sizes: $sizes"',
  'echo "files: $files"',
  'echo "job $ID"',
  'echo "err $ID" >&2',
].join('\n');

const expected = (id: number) => `entries: files stderr.log stdout.log \nsizes: 0 0\nfiles: \njob ${id}\n`;

describe('agent: work folders kept for the next attempt', () => {
  const suite = agentSuite();

  it('gives every job an empty folder, and never one a process of an earlier job can still write to', async () => {
    const peer = suite.peer();
    const agent = await startAgent(peer, suite.dir());
    const workRoot = join(agent.dataDir, 'work');
    const go = join(suite.dir(), 'late-go');
    const pidFile = join(suite.dir(), 'late.pid');
    // Job 1 leaves a process in its group that writes to the job's stdout, its working folder and its
    // $MILLRACE_FILES once the test lets it, long after the job's report was acknowledged.
    peer.run({
      jobId: 1,
      scriptType: 'BASH',
      script: [
        'echo "job 1"',
        '(until [ -e "$GO" ]; do sleep 0.05; done; echo late-1; echo late-1 > late.txt; echo late-1 > "$MILLRACE_FILES/late.txt") &',
        'echo $! > "$PIDFILE"',
      ].join('\n'),
      env: { GO: go, PIDFILE: pidFile },
    });
    const late = await pidFrom(pidFile);
    assert.equal((await peer.finished(1)).returnCode, 0);

    // Jobs one after another, each leaving the usual folder with both logs written.
    const runJob = async (id: number, extra = '') => {
      peer.run({ jobId: id, scriptType: 'BASH', script: `${REPORT}\n${extra}`, env: { ID: String(id) } });
      const f = await peer.finished(id);
      assert.equal(f.returnCode, 0, peer.file(id, 'stderr.log').toString());
      assert.equal(peer.file(id, 'stdout.log').toString(), expected(id), `job ${id}'s stdout`);
      assert.equal(peer.file(id, 'stderr.log').toString(), `err ${id}\n`, `job ${id}'s stderr`);
      return f;
    };
    for (let id = 2; id <= 6; id++) await runJob(id);
    // The agent keeps the last one for reuse, its logs emptied.
    const spares = () => readdirSync(workRoot).filter((name) => name.startsWith('.spare-'));
    await until(() => spares().length > 0, 'a spare folder');
    for (const name of spares()) {
      const spare = join(workRoot, name);
      assert.deepEqual(readdirSync(spare).sort(), ['files', 'stderr.log', 'stdout.log']);
      assert.deepEqual(readdirSync(join(spare, 'files')), []);
      assert.equal(statSync(join(spare, 'stdout.log')).size, 0);
    }

    // Now job 1's process writes, and ends.
    writeFileSync(go, '');
    await until(() => !processRuns(late), "job 1's background process to end");
    for (let id = 7; id <= 10; id++) await runJob(id);
    // Folders left with something more are not passed on.
    await runJob(11, 'echo kept > stray.txt');
    await runJob(12);
    const withFile = await runJob(13, 'echo report > "$MILLRACE_FILES/r.csv"');
    assert.deepEqual(
      withFile.files.map((x) => x.name),
      ['stdout.log', 'stderr.log', 'r.csv'],
    );
    await runJob(14);
    // Job 14's folder is passed on (renamed a spare) once its report is acknowledged, a moment after it finished:
    // looked at only after, so that no folder moves while the walk below reads it.
    await until(() => !readdirSync(workRoot).some((name) => name.startsWith('14.')), "job 14's folder to be released");
    assert.equal(peer.file(1, 'stdout.log').toString(), 'job 1\n');
    for (const [path, text] of filesUnder(workRoot)) assert.ok(!text.includes('late-1'), `${path} holds "${text}"`);

    // A new agent process on the same folder deletes the spares of the one before.
    const left = spares();
    assert.ok(left.length > 0, 'a spare folder after job 14');
    await killAgent(agent);
    await startAgent(peer, suite.dir());
    await until(() => left.every((name) => !existsSync(join(workRoot, name))), "the earlier agent's spares to go");
    await runJob(15);
  });
});
