import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type AgentMessage, encode, LineDecoder, MAX_LINE_BYTES } from '../../../src/agent/protocol.ts';

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

describe('protocol: LineDecoder, property', () => {
  it('gives the same messages however the bytes are cut', () => {
    const message = fc.oneof(
      fc.record({ type: fc.constant('ping') }),
      fc.record({
        type: fc.constant('output'),
        jobId: fc.nat(),
        attempt: fc.nat(),
        file: fc.string({ unit: 'grapheme' }),
        offset: fc.nat(),
        data: fc.string({ maxLength: 3000 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 20 }), (messages, cuts) => {
        const bytes = Buffer.from(messages.map((m) => encode(m as AgentMessage)).join(''));
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const got: unknown[] = [];
        const decoder = new LineDecoder(
          (m) => got.push(m),
          (why) => assert.fail(why),
        );
        let from = 0;
        for (const to of [...at, bytes.length]) {
          decoder.push(bytes.subarray(from, to));
          from = to;
        }
        assert.deepEqual(got, JSON.parse(JSON.stringify(messages)));
      }),
      { seed: 25, numRuns: 500 },
    );
  });

  it('reports a line longer than MAX_LINE_BYTES once it is that long, without its end', () => {
    const errors: string[] = [];
    const decoder = new LineDecoder(
      () => {},
      (why) => errors.push(why),
    );
    const piece = Buffer.alloc(64 * 1024, 0x61);
    for (let sent = 0; sent <= MAX_LINE_BYTES && errors.length === 0; sent += piece.length) decoder.push(piece);
    assert.deepEqual(errors, ['a line is too long']);
  });
});
