import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKUP_FORMAT, checkManifest, compareVersions } from '../../../src/backup/manifest.ts';
import { NOT_COPIED, tablesToCopy } from '../../../src/backup/table-plan.ts';

const manifest = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: BACKUP_FORMAT,
    millraceVersion: '0.1.0',
    createdAt: '2026-11-26T12:00:00.000Z',
    database: 'sqlite',
    migrations: ['0001_a', '0002_b'],
    jobFiles: 'folder',
    files: [{ name: 'millrace.sqlite', size: 4096, sha256: '0'.repeat(64) }],
    ...over,
  });

describe('backup manifest', () => {
  test('versions compare by number, not by text', () => {
    assert.equal(compareVersions('0.10.0', '0.9.9'), 1);
    assert.equal(compareVersions('1.0.0', '1.0'), 0);
    assert.equal(compareVersions('0.1.0-rc1', '0.1.1'), -1);
  });

  test('an archive of this or an older version is accepted', () => {
    assert.equal(checkManifest(manifest(), '0.1.0', ['0001_a', '0002_b', '0003_c']).database, 'sqlite');
    assert.equal(checkManifest(manifest({ millraceVersion: '0.0.9' }), '0.1.0', ['0001_a', '0002_b']).format, 1);
  });

  test('a newer Millrace, a newer format, an unknown migration and an unreadable manifest are refused in one line', () => {
    const refused = (text: string, why: RegExp) =>
      assert.throws(
        () => checkManifest(text, '0.1.0', ['0001_a', '0002_b']),
        (e: Error) => why.test(e.message) && !e.message.includes('\n'),
      );
    refused(manifest({ millraceVersion: '0.2.0' }), /made by Millrace 0\.2\.0, newer than this 0\.1\.0/);
    refused(manifest({ format: BACKUP_FORMAT + 1 }), /has backup format 2; this Millrace 0\.1\.0 reads format 1/);
    refused(
      manifest({ migrations: ['0001_a', '0016_later'] }),
      /migrations this Millrace 0\.1\.0 does not know: 0016_later/,
    );
    refused('{"format": 1, "millraceV', /^the archive is damaged: its manifest is not readable$/);
    refused(manifest({ files: [] }), /^the archive is damaged: it lists no database$/);
  });
});

describe('the tables a migration copies', () => {
  test('every table but those named with a reason, meta first, SQLite internals never', () => {
    assert.deepEqual(
      tablesToCopy(['sequences', 'objects', 'meta', 'jobs', 'sqlite_stat1', 'cluster_nodes', 'runtime_stats']),
      ['meta', 'objects', 'jobs', 'runtime_stats'],
    );
    for (const [table, why] of Object.entries(NOT_COPIED)) assert.ok(why.length > 10, `${table} says why`);
  });
});
