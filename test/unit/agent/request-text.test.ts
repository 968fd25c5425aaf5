import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { statusExpected, substitute } from '../../../src/agent/http-job.ts';
import { readJsonPath } from '../../../src/agent/json-path.ts';
import { csvLine, parseScript } from '../../../src/agent/sql-text.ts';

const known = new Set(['ID', 'NOTE']);

test('statements split at ; outside literals, quoted names and comments; :NAME becomes $n', () => {
  const script = `INSERT INTO t VALUES (:ID, ':NOTE; no', "a;b", E'it\\'s; :ID');
  -- comment; :NOTE
  /* block /* nested; */ :ID */ SELECT $q$; :NOTE $q$, :NOTE, :ID, x::text, a[1:2], :OTHER;;`;
  const statements = parseScript(script, known);
  assert.equal(statements.length, 2);
  assert.equal(statements[0]?.text, `INSERT INTO t VALUES ($1, ':NOTE; no', "a;b", E'it\\'s; :ID')`);
  assert.deepEqual(statements[0]?.names, ['ID']);
  assert.match(statements[1]?.text ?? '', /SELECT \$q\$; :NOTE \$q\$, \$1, \$2, x::text, a\[1:2\], :OTHER$/);
  assert.deepEqual(statements[1]?.names, ['NOTE', 'ID']);
  assert.deepEqual(parseScript('  ; -- only a comment\n;', known), []);
});

test('CSV fields are quoted as RFC 4180 asks, NULL is empty', () => {
  assert.equal(csvLine([1, 'a,b', 'say "hi"', null, 'line\nbreak']), '1,"a,b","say ""hi""",,"line\nbreak"\r\n');
  fc.assert(
    fc.property(fc.string(), (s) => {
      const field = csvLine([s]).slice(0, -2);
      const plain = !/[",\r\n]/.test(s);
      assert.equal(field, plain ? s : `"${s.replaceAll('"', '""')}"`);
    }),
  );
});

test('JSON paths of the $.a.b[0] subset', () => {
  const doc = { id: 7, items: [{ name: 'first' }, { name: null }], nested: { a: { b: true } } };
  assert.equal(readJsonPath(doc, '$.id'), '7');
  assert.equal(readJsonPath(doc, '$.items[0].name'), 'first');
  assert.equal(readJsonPath(doc, '$.items[1].name'), '');
  assert.equal(readJsonPath(doc, '$.nested'), '{"a":{"b":true}}');
  assert.equal(readJsonPath(doc, '$.items[5]'), undefined);
  assert.equal(readJsonPath(doc, '$.missing.x'), undefined);
  assert.equal(readJsonPath(doc, '$.constructor'), undefined);
});

test('${NAME} substitution and ExpectStatus ranges', () => {
  assert.equal(substitute('a ${X} ${Y} ${X}', { X: '1' }), 'a 1 ${Y} 1');
  assert.equal(substitute('?q=${X}', { X: 'a&b c' }, encodeURIComponent), '?q=a%26b%20c');
  assert.equal(statusExpected(204, '200-299,304'), true);
  assert.equal(statusExpected(304, '200-299,304'), true);
  assert.equal(statusExpected(301, '200-299,304'), false);
});
