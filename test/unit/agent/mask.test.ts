import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Masker, maskText } from '../../../src/agent/mask.ts';
import { toServerMessage } from '../../../src/agent/server-messages.ts';

/** Feeds `text` to a masker cut at the given byte offsets; returns the whole output. */
function streamed(text: string | Buffer, values: string[], cuts: number[]): Buffer {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const m = new Masker(values);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    out.push(m.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(m.push(bytes.subarray(from)), m.end());
  return Buffer.concat(out);
}

/** Every way to cut `text` in two and in three pieces gives `expected`. */
function everyCut(text: string, values: string[], expected: string): void {
  const n = Buffer.byteLength(text);
  for (let a = 0; a <= n; a++)
    for (let b = a; b <= n; b++)
      assert.equal(streamed(text, values, [a, b]).toString('utf8'), expected, `cuts ${a}, ${b}`);
}

describe('agent: masking secrets in job output', () => {
  it('replaces every occurrence by ***', () => {
    assert.equal(maskText('pw=s3cret and again s3cret.', ['s3cret']), 'pw=*** and again ***.');
    assert.equal(maskText('nothing here', ['s3cret']), 'nothing here');
  });

  it('finds a value that straddles two (or three) chunks, wherever the cuts fall', () => {
    everyCut('user=ada pw=s3cret!', ['s3cret'], 'user=ada pw=***!');
    everyCut('s3crets3cret', ['s3cret'], '******');
  });

  it('holds back at most the longest value minus one byte', () => {
    const m = new Masker(['abcdef']);
    assert.equal(m.push(Buffer.from('0123456789')).toString(), '01234');
    assert.equal(m.push(Buffer.from('abc')).toString(), '567');
    assert.equal(m.push(Buffer.from('def!')).toString(), '89***');
    assert.equal(m.end().toString(), '!');
  });

  it('masks the union of overlapping occurrences as one ***, leaving no part in clear', () => {
    everyCut('xabcdefy', ['abcd', 'cdef'], 'x***y');
    everyCut('aaaaa', ['aa'], '***');
  });

  it('prefers the longer value where two start at the same byte', () => {
    everyCut('[secret-long]', ['secret', 'secret-long'], '[***]');
    everyCut('[secret-long]', ['secret-long', 'secret'], '[***]');
  });

  it('ignores empty values, and masks nothing without values', () => {
    assert.equal(maskText('abc', ['', 'b']), 'a***c');
    assert.equal(maskText('abc', ['']), 'abc');
    const m = new Masker([]);
    assert.equal(m.empty, true);
    const chunk = Buffer.from('as is');
    assert.equal(m.push(chunk), chunk);
  });

  it('works on bytes: a multi-byte value or character split across chunks stays whole', () => {
    everyCut('naïve: pässwörd ✓', ['pässwörd'], 'naïve: *** ✓');
    everyCut('€€€ 🔑key🔑 €', ['🔑key🔑'], '€€€ *** €');
    // Bytes around a value pass through unchanged, even when they are not valid UTF-8 on their own.
    const raw = Buffer.concat([Buffer.from([0xff, 0xe2]), Buffer.from('pw'), Buffer.from([0x82, 0xac])]);
    assert.deepEqual(
      streamed(raw, ['pw'], [1, 3]),
      Buffer.concat([Buffer.from([0xff, 0xe2]), Buffer.from('***'), Buffer.from([0x82, 0xac])]),
    );
  });

  it('gives the same output however the input is cut (property)', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', 'é', '✓');
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 40 }).map((a) => a.join('')),
        fc.array(
          fc.array(alphabet, { minLength: 1, maxLength: 4 }).map((a) => a.join('')),
          { maxLength: 3 },
        ),
        fc.array(fc.nat(200), { maxLength: 5 }),
        (text, values, cuts) => {
          const n = Buffer.byteLength(text);
          const whole = streamed(text, values, []);
          assert.deepEqual(
            streamed(
              text,
              values,
              cuts.map((c) => c % (n + 1)),
            ),
            whole,
          );
          for (const v of values) assert.equal(whole.includes(Buffer.from(v)), false, `${v} left in ${whole}`);
        },
      ),
    );
  });

  it('run messages carry the values to mask; a bad mask is refused', () => {
    const run = toServerMessage({ type: 'run', jobId: 1, attempt: 1, scriptType: 'SH', script: 'x', mask: ['pw'] });
    assert.deepEqual(typeof run === 'object' && run.type === 'run' ? run.mask : undefined, ['pw']);
    assert.equal(
      typeof toServerMessage({ type: 'run', jobId: 1, attempt: 1, scriptType: 'SH', script: '', mask: [1] }),
      'string',
    );
    assert.equal(
      typeof toServerMessage({ type: 'run', jobId: 1, attempt: 1, scriptType: 'SH', script: '', mask: 'pw' }),
      'string',
    );
  });
});
