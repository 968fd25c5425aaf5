import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrateToPostgres } from '../../../src/backup/migrate.ts';
import { openStore } from '../../../src/store/open.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';

/**
 * The migration copies tables by what the source holds, not by a list: a table a later migration adds is carried
 * with its rows and ids, one the destination lacks stops the copy naming it, and a destination holding another
 * installation is refused.
 */
describe('millrace migrate: tables', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  let dir = '';
  const dbs: Array<{ url: string; drop(): Promise<void> }> = [];
  const lines: string[] = [];
  const say = (line: string) => lines.push(line);
  const query = async (url: string, text: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-migrate-tables-'));
    const store = await openStore({ dataDir: dir });
    await store.setMeta('initialised', '1');
    await store.close();
    const sqlite = new Database(join(dir, 'millrace.sqlite'));
    sqlite.exec('create table later_stats (id integer primary key, value text not null)');
    sqlite.exec("insert into later_stats (id, value) values (7, 'seven'), (42, 'forty-two')");
    sqlite.close();
  });
  after(async () => {
    for (const db of dbs) await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  test('a table the destination lacks stops the copy, naming it', async () => {
    const db = await createPgDatabase();
    dbs.push(db);
    await assert.rejects(migrateToPostgres({ from: dir, to: db.url, say }), /the destination has no table later_stats/);
  });

  test('a table added after this code was written is copied with its ids', async () => {
    const db = await createPgDatabase();
    dbs.push(db);
    await (await openStore({ dataDir: dir, databaseUrl: db.url })).close();
    await query(db.url, 'create table later_stats (id bigint primary key, value text not null)');
    const counts = await migrateToPostgres({ from: dir, to: db.url, say });
    assert.deepEqual(
      counts.find((c) => c.table === 'later_stats'),
      { table: 'later_stats', source: 2, destination: 2 },
    );
    assert.deepEqual(await query(db.url, 'select id, value from later_stats order by id'), [
      { id: '7', value: 'seven' },
      { id: '42', value: 'forty-two' },
    ]);
    // Run again: nothing doubles.
    const again = await migrateToPostgres({ from: dir, to: db.url, say });
    assert.ok(again.every((c) => c.source === c.destination));
  });

  test('a destination holding another installation is refused', async () => {
    const db = await createPgDatabase();
    dbs.push(db);
    const other = await openStore({ dataDir: dir, databaseUrl: db.url });
    await other.setMeta('initialised', '2');
    await other.close();
    await assert.rejects(migrateToPostgres({ from: dir, to: db.url, say }), /holds another Millrace installation/);
  });
});
