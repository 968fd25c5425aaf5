import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { keptPlan } from '../../../src/store/sqlite-kept-plans.ts';

/** SQLite statements keep their plan: a bound LIMIT or OFFSET becomes an expression (src/store/sqlite-kept-plans.ts). */

test('keptPlan writes each bound limit and offset as an expression and leaves the other parameters', () => {
  assert.equal(
    keptPlan('select * from "jobs" where "status" = ? and "queue" = ? order by "job_id" limit ? offset ?'),
    'select * from "jobs" where "status" = ? and "queue" = ? order by "job_id" limit +? offset +?',
  );
  assert.equal(keptPlan('select 1 from "jobs" limit 1'), 'select 1 from "jobs" limit 1');
  assert.equal(keptPlan('select * from t LIMIT ? OFFSET ?'), 'select * from t LIMIT +? OFFSET +?');
});

test('a rewritten statement pages as the original does and refuses the same bad values', () => {
  const db = new BetterSqlite3(':memory:');
  db.exec('create table t (id integer primary key)');
  const insert = db.prepare('insert into t (id) values (?)');
  for (let id = 1; id <= 20; id++) insert.run(id);
  const sql = 'select id from t where id > ? order by id limit ? offset ?';
  for (const [after, limit, offset] of [
    [0, 5, 0],
    [3, 4, 2],
    [18, 10, 0],
    [0, 0, 0],
  ])
    assert.deepEqual(db.prepare(keptPlan(sql)).all(after, limit, offset), db.prepare(sql).all(after, limit, offset));
  // Bad values fail alike: not a whole number, NULL, text that is no number.
  for (const bad of [1.5, null, 'x'])
    assert.throws(
      () => db.prepare(keptPlan(sql)).all(0, bad, 0),
      (err: Error) => {
        assert.throws(() => db.prepare(sql).all(0, bad, 0), { message: err.message });
        return true;
      },
    );
  db.close();
});
