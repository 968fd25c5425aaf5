import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: PYTHON, NODE and SH jobs set Out parameters through $MILLRACE_OUT', () => {
  const suite = agentSuite();

  it('reports the listed names only; the first = splits and a later line wins', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    const outNames = ['A', 'B'];
    peer.run({
      jobId: 1,
      scriptType: 'PYTHON',
      script: [
        'import os',
        'with open(os.environ["MILLRACE_OUT"], "a") as f:',
        '    f.write("A=first\\nA=py " + os.environ["IN"] + "\\nB=x=y\\nC=not listed\\n")',
        'print("python ran")',
      ].join('\n'),
      env: { IN: 'in-value' },
      outNames,
    });
    peer.run({
      jobId: 2,
      scriptType: 'NODE',
      script: [
        "const fs = require('node:fs');",
        "fs.appendFileSync(process.env.MILLRACE_OUT, 'A=node ' + process.env.IN + '\\nB=\\n');",
        "console.log('node ran');",
      ].join('\n'),
      env: { IN: 'in-value' },
      outNames,
    });
    peer.run({
      jobId: 3,
      scriptType: 'NODE',
      script: [
        "import { appendFileSync } from 'node:fs';",
        'await Promise.resolve();',
        "appendFileSync(process.env.MILLRACE_OUT, 'A=es module\\n');",
      ].join('\n'),
      outNames,
    });
    peer.run({
      jobId: 4,
      scriptType: 'SH',
      script: 'A=not-reported\necho "B=sh $IN" >> "$MILLRACE_OUT"\n',
      env: { IN: 'in-value' },
      outNames,
    });
    const [py, node, esm, sh] = await Promise.all([1, 2, 3, 4].map((id) => peer.finished(id)));
    assert.deepEqual(py?.out, { A: 'py in-value', B: 'x=y' });
    assert.equal(py?.returnCode, 0);
    assert.equal(peer.file(1, 'stdout.log').toString(), 'python ran\n');
    assert.deepEqual(node?.out, { A: 'node in-value', B: '' });
    assert.equal(peer.file(2, 'stdout.log').toString(), 'node ran\n');
    assert.deepEqual(esm?.out, { A: 'es module' });
    assert.equal(esm?.returnCode, 0, peer.file(3, 'stderr.log').toString());
    assert.equal(peer.file(3, 'stderr.log').toString(), '');
    assert.deepEqual(sh?.out, { B: 'sh in-value' });
  });
});
