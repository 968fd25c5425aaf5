import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { badParameter, jobEnvironment } from '../../../src/agent/environment.ts';

describe('agent: job environment', () => {
  it('drops every MILLRACE_ variable of the base (any case), then adds parameters, then the job variables', () => {
    const env = jobEnvironment(
      { PATH: '/bin', MILLRACE_ADMIN_PASSWORD: 's', millrace_x: 's', MILLRACEFOO: 'kept' },
      { P: '1', PATH: '/param/bin', MILLRACE_JOB_ID: 'not this' },
      { MILLRACE_JOB_ID: '7' },
    );
    assert.deepEqual({ ...env }, { PATH: '/param/bin', MILLRACEFOO: 'kept', P: '1', MILLRACE_JOB_ID: '7' });
  });

  it('refuses parameters that cannot be environment variables', () => {
    assert.equal(badParameter({ A: 'x', B_2: '$(x)' }), null);
    assert.match(badParameter({ 'A=B': 'x' }) ?? '', /cannot be an environment variable name/);
    assert.match(badParameter({ '': 'x' }) ?? '', /cannot be/);
    assert.match(badParameter({ A: 'x\0y' }) ?? '', /NUL/);
  });
});
