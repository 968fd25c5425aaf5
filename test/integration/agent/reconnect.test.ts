import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';
import { until } from '../../helpers/processes.ts';

describe('agent: connection trouble', () => {
  const suite = agentSuite();

  it('a refused upgrade (401, 404, 409) is logged with its reason and retried with backoff', async () => {
    const peer = suite.peer();
    peer.rejectWith = 409;
    const agentP = startAgent(peer, suite.dir());
    await until(() => peer.requests.length >= 3, 'three refused upgrades');
    const refused = peer.requests.length;
    peer.rejectWith = undefined;
    const agent = await agentP;
    assert.match(agent.output(), /the server answered 409: refused with 409 by the test/);
    const headers = peer.requests.at(-1)?.headers ?? {};
    assert.equal(headers.authorization, `Bearer ${peer.secret}`);
    assert.equal(headers['x-millrace-process-server'], peer.processServer);
    assert.match(String(headers['x-millrace-agent-instance']), /^[0-9a-f]{16}$/);
    assert.ok(refused >= 3);
  });

  it('a job keeps running across a dropped connection; its output ships again from 0, then its report', async () => {
    const peer = suite.peer();
    peer.run({
      jobId: 1,
      scriptType: 'BASH',
      script:
        'echo first\nwhile [ ! -e "$MILLRACE_FILES/go" ]; do sleep 0.05; done\nrm "$MILLRACE_FILES/go"\necho second\n',
    });
    await until(() => peer.file(1, 'stdout.log').toString() === 'first\n', 'the first line');
    const before = peer.connections;
    peer.drop();
    const hello = await peer.waitFor((r) => r.connection > before && r.message.type === 'hello', 'hello again');
    assert.ok(hello.message.type === 'hello');
    assert.deepEqual(
      hello.message.known.map((k) => [k.jobId, k.state]),
      [[1, 'running']],
    );
    await peer.waitFor(
      (r) => r.connection > before && r.message.type === 'output' && r.message.offset === 0,
      'stdout again from offset 0',
    );
    const instance = peer.requests.at(-1)?.headers['x-millrace-agent-instance'];
    assert.equal(instance, peer.requests.at(-2)?.headers['x-millrace-agent-instance'], 'same agent instance');
    writeFileSync(join(suite.dir(), 'agent', 'work', '1.1', 'files', 'go'), '');
    const f = await peer.finished(1);
    assert.equal(f.returnCode, 0);
    assert.equal(peer.file(1, 'stdout.log').toString(), 'first\nsecond\n');
    assert.equal(peer.messages('started').filter((m) => m.jobId === 1).length, 1);
  });

  it('a line that is not JSON makes it reconnect; a malformed or unknown message is ignored', async () => {
    const peer = suite.peer();
    const before = peer.connections;
    peer.sendRaw('{"type":"welcome"\n');
    await peer.waitFor((r) => r.connection > before && r.message.type === 'hello', 'hello after a framing error');
    peer.sendRaw('{"type":"surprise"}\n[1,2]\n{"type":"run","jobId":"x"}\n{"type":"run","jobId":3,"attempt":1}\n');
    peer.sendRaw('{"type":"kill"}\n{"type":"ack","jobId":-1,"attempt":1}\nnull\n"text"\n');
    peer.run({ jobId: 4, scriptType: 'SH', script: 'echo still here' });
    const f = await peer.finished(4);
    assert.equal(f.returnCode, 0);
    assert.equal(peer.connections, before + 1);
    assert.equal(peer.errors.length, 0);
  });
});
