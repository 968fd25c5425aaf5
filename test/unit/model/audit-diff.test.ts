import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditDiff, MASK } from '../../../src/model/audit-diff.ts';

/** docs/architecture.md §18: the diff names the changed fields only, with every secret written ***. */

test('only changed fields, before and after, absent sides null', () => {
  assert.deepEqual(auditDiff('Queue', { Held: false, Description: 'x' }, { Held: true, Description: 'x' }), {
    Held: { before: false, after: true },
  });
  assert.deepEqual(auditDiff('Queue', undefined, { Held: true }), { Held: { before: null, after: true } });
  assert.deepEqual(auditDiff('Queue', { Held: true }, undefined), { Held: { before: true, after: null } });
});

test('declared secrets and secret-looking names at any depth are masked', () => {
  const diff = auditDiff(
    'Credential',
    { Password: 'sealed-old', RealUser: 'a' },
    { Password: 'sealed-new', RealUser: 'a' },
  );
  assert.deepEqual(diff, { Password: { before: MASK, after: MASK } });
  const headers = auditDiff('JobDefinition', undefined, {
    Headers: { Authorization: 'Bearer abc', Accept: 'json' },
    Http: [{ token: 't0k3n' }],
  });
  assert.deepEqual(headers.Headers?.after, { Authorization: MASK, Accept: 'json' });
  assert.deepEqual(headers.Http?.after, [{ token: MASK }]);
  const text = JSON.stringify(headers);
  for (const secret of ['Bearer abc', 't0k3n']) assert.ok(!text.includes(secret));
});
