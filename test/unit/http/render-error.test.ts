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

test('a full disk → 503 naming the disk, with Retry-After: SQLite, PostgreSQL (53100) and file writes', () => {
  const errors = [
    Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }),
    Object.assign(new Error('could not extend file "base/16384/2619": No space left on device'), { code: '53100' }),
    Object.assign(new Error("ENOSPC: no space left on device, write '/data/jobfiles/7/stdout.log'"), {
      code: 'ENOSPC',
    }),
    Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT' }),
    Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE', diskFull: true }),
  ];
  for (const err of errors) {
    const e = renderError(err, LIMIT);
    assert.equal(e.status, 503, String(err.code));
    assert.equal(e.code, '503');
    assert.equal(e.headers['Retry-After'], '30');
    assert.match(e.message, /disk is full/);
    assert.doesNotMatch(e.message, /base\/16384|jobfiles|ENOSPC/, 'no paths or codes leak');
    assert.equal(e.unexpected, false);
  }
  // An I/O error not known to come from a full disk stays what it is.
  assert.equal(
    renderError(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }), LIMIT).status,
    500,
  );
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
