import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { open } from 'yauzl';
import { BACKUP_FORMAT, checkManifest, type Manifest } from '../../../src/backup/manifest.ts';
import { openBackup } from '../../../src/backup/zip-reader.ts';
import { ZipWriter } from '../../../src/backup/zip-writer.ts';

/**
 * The backup archive's zip: what is written reads back byte for byte; past 65,535 entries the zip64 records carry the
 * count (yauzl reads them); a changed byte in an entry is refused naming it.
 */

const check = (text: string) => checkManifest(text, '0.1.0', []);

async function archive(file: string, files: Record<string, Buffer>): Promise<void> {
  const zip = new ZipWriter(file);
  const listed: Manifest['files'] = [];
  for (const [name, data] of Object.entries(files)) listed.push({ name, ...(await zip.add(name, data)) });
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    millraceVersion: '0.1.0',
    createdAt: new Date(0).toISOString(),
    database: 'millrace.sqlite' in files ? 'sqlite' : 'postgres',
    migrations: [],
    jobFiles: 'folder',
    files: listed,
  };
  await zip.add('manifest.json', Buffer.from(JSON.stringify(manifest)));
  await zip.finish();
}

describe('backup zip', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-zip-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('entries read back as written, in folders', async () => {
    const file = join(dir, 'a.zip');
    const big = Buffer.alloc(3 * 1024 * 1024, 'x');
    big.write('the end', big.length - 7);
    await archive(file, { 'secret.key': Buffer.from('k\n'), 'jobfiles/7/stdout.log': big, empty: Buffer.alloc(0) });
    const opened = await openBackup(file, check);
    try {
      await opened.extract(join(dir, 'out'));
    } finally {
      opened.close();
    }
    assert.equal(await readFile(join(dir, 'out', 'secret.key'), 'utf8'), 'k\n');
    assert.ok((await readFile(join(dir, 'out', 'jobfiles', '7', 'stdout.log'))).equals(big));
    assert.equal((await readFile(join(dir, 'out', 'empty'))).length, 0);
  });

  test('70,000 entries: the count is in the zip64 records', async () => {
    const file = join(dir, 'many.zip');
    const zip = new ZipWriter(file);
    for (let i = 0; i < 70_000; i++) await zip.add(`jobfiles/${i}/stdout.log`, Buffer.from(String(i)));
    await zip.finish();
    const count = await new Promise<number>((resolve, reject) =>
      open(file, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z.entryCount))),
    );
    assert.equal(count, 70_000);
  });

  test('a changed byte in an entry is refused, naming the entry', async () => {
    const file = join(dir, 'b.zip');
    await archive(file, { 'millrace.sqlite': Buffer.alloc(200_000, 'database page ') });
    const bytes = await readFile(file);
    const at = bytes.indexOf('millrace.sqlite') + 'millrace.sqlite'.length + 40;
    bytes[at] = (bytes[at] as number) ^ 0xff;
    await writeFile(file, bytes);
    const opened = await openBackup(file, check);
    try {
      await assert.rejects(opened.extract(join(dir, 'b-out')), /^Error: the archive is damaged: millrace\.sqlite/);
    } finally {
      opened.close();
    }
  });
});
