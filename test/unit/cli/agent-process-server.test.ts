import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processServerKey } from '../../../src/cli/agent.ts';

test('--process-server: a bare name means GLOBAL, as everywhere keys are written', () => {
  assert.equal(processServerKey('Build1'), 'GLOBAL.Build1');
  assert.equal(processServerKey('GLOBAL.Local'), 'GLOBAL.Local');
  assert.equal(processServerKey('ETL.Unix1'), 'ETL.Unix1');
});

test('--process-server: what is neither a name nor <partition>.<name> is refused, naming both forms', () => {
  for (const bad of ['', '.Build1', 'a/b', 'GLOBAL.', '../x'])
    assert.throws(() => processServerKey(bad), /is not <partition>\.<name> or a name \(meaning GLOBAL\.<name>\)/, bad);
});
