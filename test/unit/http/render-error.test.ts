import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conflict } from '../../../src/errors.ts';
import { renderError } from '../../../src/http/errors.ts';

const LIMIT = 1024 * 1024;

test('a database that cannot be reached → 503 with Retry-After, on both dialects', () => {
  for (const code of ['ECONNREFUSED', '57P01', '08006', 'SQLITE_BUSY']) {
    const e = renderError(Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code }), LIMIT);
    assert.equal(e.status, 503, code);
    assert.equal(e.headers['Retry-After'], '5');
    assert.doesNotMatch(e.message, /127\.0\.0\.1|5432/, 'no connection details leak');
  }
});

test('an unexpected error → a bare 500, never its message, stack or SQL', () => {
  const e = renderError(new Error('insert into objects (unique_id) values ($1) - violates constraint'), LIMIT);
  assert.deepEqual(
    { status: e.status, code: e.code, message: e.message },
    { status: 500, code: '500', message: 'Internal server error' },
  );
  assert.equal(e.unexpected, true);
});

test('coded errors keep their status, message and headers', () => {
  const e = renderError(conflict('Object Queue:GLOBAL.X already exists'), LIMIT);
  assert.deepEqual(
    { status: e.status, code: e.code, message: e.message },
    { status: 409, code: '409', message: 'Object Queue:GLOBAL.X already exists' },
  );
});

test("framework errors get Millrace's wording", () => {
  const big = renderError(
    Object.assign(new Error('Request body is too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }),
    LIMIT,
  );
  assert.equal(big.message, 'The body is larger than the limit of 1048576 bytes');
  const json = renderError(
    Object.assign(new SyntaxError('Unexpected token } in JSON at position 9'), { statusCode: 400 }),
    LIMIT,
  );
  assert.equal(json.message, 'The body is not valid JSON');
});
