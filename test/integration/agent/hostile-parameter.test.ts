import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { ScriptType } from '../../../src/agent/protocol.ts';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: a parameter value that looks like shell code', () => {
  const suite = agentSuite();

  const scripts: Record<ScriptType, string> = {
    BASH: 'echo $P\necho "$P"\nOUT=$P\n',
    SH: 'echo $P\necho "$P"\necho "OUT=$P" >> "$MILLRACE_OUT"\n',
    PYTHON:
      'import os\nprint(os.environ["P"])\nopen(os.environ["MILLRACE_OUT"], "w").write("OUT=" + os.environ["P"])\n',
    NODE: "console.log(process.env.P);\nrequire('fs').writeFileSync(process.env.MILLRACE_OUT, 'OUT=' + process.env.P);\n",
  };

  for (const [i, type] of (['BASH', 'SH', 'PYTHON', 'NODE'] as const).entries()) {
    it(`stays text in a ${type} job (the command it holds never runs)`, async () => {
      const peer = suite.peer();
      if (i === 0) await startAgent(peer, suite.dir());
      const marker = join(suite.dir(), `pwned-${type}`);
      const value = `$(touch ${marker}); \`touch ${marker}\` "; touch ${marker}; echo '`;
      const f = peer.run({
        jobId: 100 + i,
        scriptType: type,
        script: scripts[type],
        env: { P: value, [`X$(touch ${marker})`]: 'name' },
        outNames: ['OUT', `x[$(touch ${marker})]`],
      });
      const done = await peer.finished(f.jobId);
      assert.equal(done.returnCode, 0, peer.file(f.jobId, 'stderr.log').toString());
      assert.equal(existsSync(marker), false, 'the marker file was created');
      assert.equal(done.out.OUT, value);
      const stdout = peer.file(f.jobId, 'stdout.log').toString();
      assert.ok(stdout.includes(value), stdout);
    });
  }
});
