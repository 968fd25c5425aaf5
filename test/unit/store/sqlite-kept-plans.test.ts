import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { keptPlan } from '../../../src/store/sqlite-kept-plans.ts';

/** SQLite statements keep their plan: a bare parameter becomes an expression (src/store/sqlite-kept-plans.ts). */

test('keptPlan writes each bare parameter as an expression, but a pattern’s and what is quoted', () => {
  assert.equal(
    keptPlan('select * from "jobs" where "status" = ? and "queue" = ? order by "job_id" limit ? offset ?'),
    'select * from "jobs" where "status" = +? and "queue" = +? order by "job_id" limit +? offset +?',
  );
  assert.equal(keptPlan('select 1 from "jobs" limit 1'), 'select 1 from "jobs" limit 1');
  assert.equal(keptPlan('select * from t LIMIT ? OFFSET ?'), 'select * from t LIMIT +? OFFSET +?');
  assert.equal(
    keptPlan(`select "a?" from "t?" where b = '?' and 'it''s?' <> ? and c in (?, ?) and d like ? escape ?`),
    `select "a?" from "t?" where b = '?' and 'it''s?' <> +? and c in (+?, +?) and d like ? escape ?`,
  );
  assert.equal(keptPlan('insert into t (a, b) values (?, ?)'), 'insert into t (a, b) values (+?, +?)');
  // A comment is skipped whole: its apostrophe opens no string that would hide the text after it.
  assert.equal(
    keptPlan("-- the job's row?\nselect 'what?' as q, ? as p /* it's? */ from t where a = ?"),
    "-- the job's row?\nselect 'what?' as q, +? as p /* it's? */ from t where a = +?",
  );
  assert.equal(keptPlan('update t set a = ? where id = ?'), 'update t set a = +? where id = +?');
});

/** Two databases alike, a table with a partial index on `is not null` (as the jobs table has), the same rows. */
function twoDatabases(): [BetterSqlite3.Database, BetterSqlite3.Database] {
  return [0, 1].map(() => {
    const db = new BetterSqlite3(':memory:');
    db.exec('create table t (id integer primary key, n integer, s text, b blob)');
    db.exec('create index t_s on t (s, id) where s is not null');
    const insert = db.prepare('insert into t (id, n, s, b) values (?, ?, ?, ?)');
    for (let id = 1; id <= 20; id++) insert.run(id, id % 7, id % 3 === 0 ? null : `${id % 5}`, Buffer.from([id]));
    return db;
  }) as [BetterSqlite3.Database, BetterSqlite3.Database];
}

test('a rewritten statement answers and writes as the original does, and refuses the same bad values', () => {
  const [plain, kept] = twoDatabases();
  const reads: [string, unknown[]][] = [
    ['select id from t where id > ? order by id limit ? offset ?', [3, 4, 2]],
    ['select id from t where id > ? order by id limit ? offset ?', [18, 10, 0]],
    ['select id from t where id > ? order by id limit ? offset ?', [0, 0, 0]],
    // A number against a text column, a text against an integer column: the column's affinity applies alike.
    ['select id from t where s = ? order by id', [2]],
    ['select id from t where n = ? order by id', ['3']],
    ['select id from t where s in (?, ?) and n < ? order by id', ['1', 4, 5]],
    ['select id from t where s is ? order by id', [null]],
    ['select id from t where b = ?', [Buffer.from([7])]],
    ['select id from t where s like ? order by id', ['1%']],
    ['select ? as v, typeof(?) as ty', [BigInt(2) ** BigInt(62), 1.5]],
  ];
  for (const [sql, values] of reads)
    assert.deepEqual(kept.prepare(keptPlan(sql)).all(...values), plain.prepare(sql).all(...values), sql);
  const writes: [string, unknown[]][] = [
    ['update t set s = ?, n = ? where id = ?', ['x', 9, 4]],
    ['insert into t (id, n, s, b) values (?, ?, ?, ?)', [21, '12', 12, null]],
    ['delete from t where n >= ?', [6]],
  ];
  for (const [sql, values] of writes) {
    assert.deepEqual(kept.prepare(keptPlan(sql)).run(...values), plain.prepare(sql).run(...values), sql);
  }
  const everything = 'select id, n, typeof(n) as tn, s, typeof(s) as ts, b from t order by id';
  assert.deepEqual(kept.prepare(everything).all(), plain.prepare(everything).all());
  // Bad values fail alike: a limit not a whole number, NULL, text that is no number.
  const sql = 'select id from t where id > ? order by id limit ? offset ?';
  for (const bad of [1.5, null, 'x'])
    assert.throws(
      () => kept.prepare(keptPlan(sql)).all(0, bad, 0),
      (err: Error) => {
        assert.throws(() => plain.prepare(sql).all(0, bad, 0), { message: err.message });
        return true;
      },
    );
  plain.close();
  kept.close();
});
