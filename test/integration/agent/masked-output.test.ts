import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type AgentProcess, agentSuite, killAgent, startAgent } from '../../helpers/agent-peer.ts';
import { pidFrom, processRuns, until } from '../../helpers/processes.ts';

const SECRET = 'pä55-w0rd€';

/** Every file under `dir` (recursively) whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (readFileSync(path).includes(Buffer.from(needle))) found.push(path);
  }
  return found;
}

describe('agent: a run with values to mask', () => {
  const suite = agentSuite({ autoAck: false });
  /** One agent for the tests in turn (the last one kills it). */
  let agent: AgentProcess | undefined;
  const running = async () => {
    agent ??= await startAgent(suite.peer(), suite.dir());
    return agent;
  };

  it('writes stdout.log and stderr.log with every occurrence masked, split writes included, and masks Out values', async () => {
    const peer = suite.peer();
    const { dataDir } = await running();
    peer.run({
      jobId: 1,
      scriptType: 'BASH',
      // The secret is written in two pieces with a pause between (two pipe reads), cut inside its "ä".
      script: [
        'echo "pw=$PW"',
        'printf %s "$PW" | head -c 2; sleep 0.3; printf %s "$PW" | tail -c +3; echo',
        'echo "err $PW" >&2',
        'head -c 200000 /dev/zero | tr "\\0" "x"; echo',
        'echo "tail $PW"',
        'OUTPW="value $PW"',
      ].join('\n'),
      env: { PW: SECRET },
      mask: [SECRET],
      outNames: ['OUTPW'],
    });
    const f = await peer.finished(1);
    assert.equal(f.returnCode, 0);
    const stdout = peer.file(1, 'stdout.log').toString('utf8');
    const lines = stdout.split('\n');
    assert.equal(lines[0], 'pw=***');
    assert.equal(lines[1], '***');
    assert.equal(lines[2], 'x'.repeat(200_000));
    assert.equal(lines[3], 'tail ***');
    assert.equal(peer.file(1, 'stderr.log').toString('utf8'), 'err ***\n');
    // The sizes reported are those of the complete, masked files.
    assert.deepEqual(
      f.files.map((x) => [x.name, x.size]),
      [
        ['stdout.log', Buffer.byteLength(stdout)],
        ['stderr.log', 8],
      ],
    );
    assert.deepEqual(f.out, { OUTPW: 'value ***' });
    // Nothing the agent keeps on disk (spool, work folder) holds the secret in clear, the script's text aside.
    assert.deepEqual(filesHolding(dataDir, SECRET), []);
    assert.ok(readFileSync(join(dataDir, 'spool', 'journal'), 'utf8').includes('value ***'));
  });

  it('completes the files once a process left behind holds the pipes (after a grace period)', async () => {
    const peer = suite.peer();
    await running();
    const pidFile = join(suite.dir(), 'background.pid');
    peer.run({
      jobId: 2,
      scriptType: 'BASH',
      script: `(setsid sleep 30 & echo $! > ${pidFile}; wait) & echo "done $PW"`,
      env: { PW: SECRET },
      mask: [SECRET],
    });
    const f = await peer.finished(2);
    assert.equal(f.returnCode, 0);
    assert.equal(peer.file(2, 'stdout.log').toString('utf8'), 'done ***\n');
    const pid = await pidFrom(pidFile);
    process.kill(pid, 'SIGKILL');
  });

  it('a masked job whose agent is killed gets SIGPIPE at its next write; nothing reaches the disk in clear', async () => {
    const peer = suite.peer();
    const first = await running();
    const marker = join(suite.dir(), 'after-kill');
    // Its next write comes when the test lets it (the file `go`), after the agent is gone, however slow the machine.
    const go = join(suite.dir(), 'masked-go');
    peer.run({
      jobId: 3,
      scriptType: 'BASH',
      script: `echo "before $PW"; while [ ! -e ${go} ]; do sleep 0.05; done; echo "after $PW"; echo survived > ${marker}`,
      env: { PW: SECRET },
      mask: [SECRET],
    });
    const started = await peer.waitFor((r) => r.message.type === 'started' && r.message.jobId === 3, 'started');
    const pid = started.message.type === 'started' ? started.message.pid : 0;
    await killAgent(first);
    writeFileSync(go, '');
    await until(() => !processRuns(pid), 'the job to end');
    assert.equal(existsSync(marker), false, 'the job went on after its agent was gone');
    assert.deepEqual(filesHolding(first.dataDir, SECRET), []);
    // The next agent on the folder reports the attempt lost, as for any job running when its agent stopped.
    const before = peer.connections;
    await startAgent(peer, suite.dir(), { dataDir: first.dataDir });
    await peer.waitFor((r) => r.connection > before && r.message.type === 'lost' && r.message.jobId === 3, 'lost');
  });
});
