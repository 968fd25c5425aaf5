import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encode, LineDecoder } from '../../../src/agent/protocol.ts';

describe('protocol: LineDecoder', () => {
  it('keeps a UTF-8 character that a chunk boundary splits', () => {
    const got: unknown[] = [];
    const decoder = new LineDecoder(
      (m) => got.push(m),
      (why) => assert.fail(why),
    );
    const bytes = Buffer.from(
      encode({ type: 'run', jobId: 1, attempt: 1, scriptType: 'SH', script: 'echo é€😀', env: {}, outNames: [] }),
    );
    for (let i = 0; i < bytes.length; i++) decoder.push(bytes.subarray(i, i + 1));
    assert.equal((got[0] as { script: string }).script, 'echo é€😀');
  });

  it('parses several lines of one chunk and waits for the rest of a partial line', () => {
    const got: unknown[] = [];
    const decoder = new LineDecoder(
      (m) => got.push(m),
      (why) => assert.fail(why),
    );
    decoder.push('{"type":"pong"}\n\n{"type":"ack","jobId":1,');
    assert.equal(got.length, 1);
    decoder.push('"attempt":2}\n');
    assert.deepEqual(got, [{ type: 'pong' }, { type: 'ack', jobId: 1, attempt: 2 }]);
  });

  it('reports a line that is not JSON', () => {
    const errors: string[] = [];
    new LineDecoder(
      () => {},
      (why) => errors.push(why),
    ).push('nope\n');
    assert.deepEqual(errors, ['a line is not JSON']);
  });
});
