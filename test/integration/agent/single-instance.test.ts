import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, killAgent, spawnAgent, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: one agent per data folder', () => {
  const suite = agentSuite();

  it('a second agent on the same folder says which pid holds it and exits 0', async () => {
    const peer = suite.peer();
    const first = await startAgent(peer, suite.dir());
    assert.equal(readFileSync(join(first.dataDir, 'agent.pid'), 'utf8').trim(), String(first.child.pid));
    const second = spawnAgent(peer, suite.dir());
    const { code } = await second.exited;
    assert.equal(code, 0);
    assert.ok(
      second.output().includes(`another agent (pid ${first.child.pid}) already uses ${first.dataDir}`),
      second.output(),
    );
    await killAgent(first);
  });

  it('a stale pid file (its process is gone) does not stop an agent', async () => {
    const peer = suite.peer();
    const dataDir = join(suite.dir(), 'stale');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'agent.pid'), '2147483646\n');
    const agent = await startAgent(peer, suite.dir(), { dataDir });
    assert.equal(readFileSync(join(dataDir, 'agent.pid'), 'utf8').trim(), String(agent.child.pid));
    await killAgent(agent);
  });
});
