import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSafeFileName } from '../../../src/agent/job-files.ts';

describe('agent: which file names in $MILLRACE_FILES become job files', () => {
  it('accepts plain names up to 255 bytes', () => {
    for (const name of ['report.csv', 'a', 'x'.repeat(255), 'résumé.pdf', 'with space.txt', 'a..b'])
      assert.equal(isSafeFileName(Buffer.from(name)), true, name);
  });

  it('refuses hidden, reserved, over-long, control-character and non-UTF-8 names', () => {
    for (const raw of [
      Buffer.from('.hidden'),
      Buffer.from('..'),
      Buffer.from('stdout.log'),
      Buffer.from('stderr.log'),
      Buffer.from('x'.repeat(256)),
      Buffer.from('é'.repeat(128)),
      Buffer.from('a\nb'),
      Buffer.from('a/b'),
      Buffer.from(''),
      Buffer.from([0x61, 0xff, 0x62]),
    ])
      assert.equal(isSafeFileName(raw), false, JSON.stringify(raw.toString()));
  });
});
