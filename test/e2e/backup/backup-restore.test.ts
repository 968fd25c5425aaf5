import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ZipWriter } from '../../../src/backup/zip-writer.ts';
import { killServers, runCli, startServe } from '../../helpers/cli.ts';
import { apiClient } from '../../helpers/http-client.ts';

/**
 * `millrace backup` of a server at work (submits coming in, BASH jobs running on its local agent), restored into a
 * fresh folder: the copy passes SQLite's integrity check, holds every job acknowledged before the backup began, and
 * a server started on it answers. A damaged archive and one of a newer version are refused in one line each,
 * leaving the target folder as it was.
 */

const KEY = 'backup-test-admin-key-0123456789abcdef';
const SUBMITS = 2000;
const STREAMS = 16;

describe('millrace backup and restore', () => {
  let dir = '';
  let archive = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-backup-'));
    archive = join(dir, 'backup.zip');
  });
  after(async () => {
    await killServers();
    await rm(dir, { recursive: true, force: true });
  });

  test('a backup under load restores into a consistent database that a server starts on', async () => {
    const data = join(dir, 'data');
    const server = await startServe(['--data', data], { MILLRACE_ADMIN_API_KEY: KEY });
    const api = apiClient(server.port, KEY);
    const def = await api('POST', '/JobDefinition/GLOBAL.Busy', { JobDefinitionType: 'BASH', Script: 'sleep 20' });
    assert.equal(def.status, 201, def.body);
    for (let i = 0; i < 4; i++) assert.equal((await api('POST', '/Job/GLOBAL.Busy', {})).status, 201);
    const acked: number[] = [];
    let next = 0;
    const stream = async () => {
      while (next < SUBMITS) {
        next++;
        const r = await api('POST', '/Job/GLOBAL.System_Sleep?fields=jobId', {
          JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
        });
        assert.equal(r.status, 201, r.body);
        acked.push(r.json.jobId);
      }
    };
    const streams = Array.from({ length: STREAMS }, stream);
    while (acked.length < SUBMITS / 4) await new Promise((r) => setTimeout(r, 20));
    const before = [...acked];
    let slowest = 0;
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        assert.equal((await api('GET', `/Job/${before[0]}`)).status, 200);
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const backup = await runCli(['backup', '--data', data, '--to', archive]);
    probing = false;
    await Promise.all([...streams, probe]);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /^backup written: .*backup\.zip \(\d+ bytes, \d+ files, [\d.]+ s\)$/m);
    // Only a hang fails here: the loop block itself is measured by bench:b15.
    assert.ok(slowest < 30_000, `a GET took ${slowest} ms during the backup`);
    assert.equal(acked.length, SUBMITS);

    const restored = join(dir, 'restored');
    const restore = await runCli(['restore', '--from', archive, '--data', restored]);
    assert.equal(restore.code, 0, restore.stderr);
    const db = new Database(join(restored, 'millrace.sqlite'), { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      const ids = new Set(db.prepare('select job_id from jobs').pluck().all() as number[]);
      const missing = before.filter((id) => !ids.has(id));
      assert.deepEqual(missing, [], 'every job acknowledged before the backup began is in it');
    } finally {
      db.close();
    }
    assert.equal(
      await readFile(join(restored, 'secret.key'), 'utf8'),
      await readFile(join(data, 'secret.key'), 'utf8'),
      'the secret key travels with the database',
    );
    await server.stop();
    const again = await startServe(['--data', restored, '--no-local-agent'], {
      MILLRACE_ADMIN_API_KEY: 'unused-0123456789',
    });
    const got = await apiClient(again.port, KEY)('GET', `/Job/${before[before.length - 1]}`);
    assert.equal(got.status, 200, got.body);
    assert.equal(got.json.JobDefinition, 'GLOBAL.System_Sleep');
    await again.stop();
  });

  test('restore refuses a flipped byte and a newer version in one line each, and changes nothing', async () => {
    assert.ok(existsSync(archive), 'the archive of the test before');
    const bytes = await readFile(archive);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] as number) ^ 0x01;
    const flipped = join(dir, 'flipped.zip');
    await writeFile(flipped, bytes);
    const target = join(dir, 'target');
    await mkdir(target);
    const damaged = await runCli(['restore', '--from', flipped, '--data', target]);
    assert.equal(damaged.code, 1);
    assert.match(damaged.stderr, /^millrace: the archive is damaged: .+\n$/);
    assert.deepEqual(await readdir(target), []);

    const newer = join(dir, 'newer.zip');
    const zip = new ZipWriter(newer);
    const manifest = { format: 1, millraceVersion: '99.0.0', createdAt: new Date().toISOString(), files: [] };
    await zip.add('manifest.json', Buffer.from(JSON.stringify({ ...manifest, database: 'sqlite', migrations: [] })));
    await zip.finish();
    const refused = await runCli(['restore', '--from', newer, '--data', target]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^millrace: the archive was made by Millrace 99\.0\.0, newer than this [\d.]+.*\n$/);
    assert.deepEqual(await readdir(target), []);

    const nonEmpty = await runCli(['restore', '--from', archive, '--data', join(dir, 'restored')]);
    assert.equal(nonEmpty.code, 1);
    assert.match(nonEmpty.stderr, /is not empty; restore into an empty folder, or give --force/);
  });
});
