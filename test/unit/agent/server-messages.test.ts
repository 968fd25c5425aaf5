import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toServerMessage } from '../../../src/agent/server-messages.ts';

describe('agent: checking messages from the server', () => {
  it('accepts well-formed messages, with defaults for a run without env or outNames', () => {
    assert.deepEqual(toServerMessage({ type: 'run', jobId: 1, attempt: 2, scriptType: 'SH', script: 'x' }), {
      type: 'run',
      jobId: 1,
      attempt: 2,
      scriptType: 'SH',
      script: 'x',
      env: {},
      outNames: [],
    });
    assert.deepEqual(toServerMessage({ type: 'welcome', killGraceMs: 5, heartbeatMs: 10, extra: 1 }), {
      type: 'welcome',
      killGraceMs: 5,
      heartbeatMs: 10,
    });
    assert.deepEqual(toServerMessage({ type: 'ack', jobId: 3, attempt: 1 }), { type: 'ack', jobId: 3, attempt: 1 });
    assert.deepEqual(toServerMessage({ type: 'heartbeat', heartbeatMs: 1500 }), {
      type: 'heartbeat',
      heartbeatMs: 1500,
    });
  });

  it('takes an HTTP or SQL run with its request, credential and JSON paths; refuses one without a request', () => {
    const request = { Url: 'http://x/', Method: 'GET' };
    const auth = { user: 'u', password: 'p', protocol: 'bearer' };
    assert.deepEqual(
      toServerMessage({
        type: 'run',
        jobId: 1,
        attempt: 1,
        scriptType: 'HTTP',
        script: '',
        request,
        auth,
        jsonPaths: { ID: '$.id' },
        mask: ['p'],
      }),
      {
        type: 'run',
        jobId: 1,
        attempt: 1,
        scriptType: 'HTTP',
        script: '',
        env: {},
        outNames: [],
        request,
        auth,
        jsonPaths: { ID: '$.id' },
        mask: ['p'],
      },
    );
    const base = { type: 'run', jobId: 1, attempt: 1, scriptType: 'SQL', script: '' };
    assert.equal(toServerMessage(base), 'run 1.1: no request');
    assert.equal(toServerMessage({ ...base, request, auth: { user: 'u' } }), 'run 1.1: bad auth');
    assert.equal(toServerMessage({ ...base, request, jsonPaths: { A: 1 } }), 'run 1.1: bad jsonPaths');
    assert.equal(toServerMessage({ ...base, scriptType: 'FTP' }), 'run 1.1 with an unknown scriptType');
  });

  it('answers a reason for anything else', () => {
    for (const bad of [
      null,
      [],
      'run',
      { type: 'nope' },
      { type: 'run', jobId: 1, attempt: 1, scriptType: 'PERL', script: '' },
      { type: 'run', jobId: 1, attempt: 1, scriptType: 'SH', script: '', env: { A: 1 } },
      { type: 'run', jobId: 1, attempt: 1, scriptType: 'SH', script: '', outNames: 'A' },
      { type: 'kill', jobId: -1, attempt: 1 },
      { type: 'abandon', jobId: 1.5, attempt: 1 },
      { type: 'welcome', killGraceMs: '5', heartbeatMs: 1 },
      { type: 'heartbeat' },
      { type: 'heartbeat', heartbeatMs: -1 },
    ])
      assert.equal(typeof toServerMessage(bad), 'string', JSON.stringify(bad));
  });
});
