import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, spooled, startAgent } from '../../helpers/agent-peer.ts';
import { pidFrom, processRuns, until } from '../../helpers/processes.ts';

describe('agent: abandon', () => {
  const suite = agentSuite();

  it('forgets the attempt without killing its process; its end is never reported', async () => {
    const peer = suite.peer();
    const agent = await startAgent(peer, suite.dir());
    const pidFile = join(suite.dir(), 'job.pid');
    // The job runs until the test lets it go (the file `go`), so it surely runs when it is abandoned and checked.
    const go = join(suite.dir(), 'abandon-go');
    peer.run({
      jobId: 6,
      scriptType: 'BASH',
      script: `echo $$ > "$PIDFILE"\nwhile [ ! -e ${go} ]; do sleep 0.05; done\n`,
      env: { PIDFILE: pidFile },
    });
    const pid = await pidFrom(pidFile);
    peer.send({ type: 'abandon', jobId: 6, attempt: 1 });
    await until(() => !spooled(agent.dataDir).has('6.1'), 'the spool entry to go');
    await until(() => !existsSync(join(agent.dataDir, 'work', '6.1')), 'the work folder to go');
    assert.ok(processRuns(pid), 'the abandoned process was killed');
    writeFileSync(go, '');
    await until(() => !processRuns(pid), 'the job to end by itself');
    // The agent still works, and never reported the abandoned attempt.
    peer.run({ jobId: 7, scriptType: 'SH', script: 'true' });
    await peer.finished(7);
    assert.deepEqual(
      peer.messages('finished').map((m) => m.jobId),
      [7],
    );
  });
});
