import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { crc32, deflateRawSync } from 'node:zlib';
import { CAR_LIMITS, type CarEntry, readCar } from '../../../src/car/archive.ts';
import { carChunks, writeCar } from '../../../src/car/archive-writer.ts';
import { MillraceError } from '../../../src/errors.ts';
import { ROOT } from '../../helpers/cli.ts';
import { type CraftEntry, craftZip, EMPTY_ZIP, zeroBomb } from '../../helpers/zip-craft.ts';

/** The archive is refused with `status` and a message matching `message`. */
async function refused(bytes: Buffer | Promise<unknown>, status: number, message: RegExp, limits = {}): Promise<void> {
  const promise = Buffer.isBuffer(bytes) ? readCar(bytes, limits) : bytes;
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof MillraceError, `a MillraceError, not ${String(err)}`);
    assert.equal(err.status, status, err.message);
    assert.equal(err.code, status === 413 ? 'TOO_LARGE' : 'UNPROCESSABLE');
    assert.match(err.message, message);
    return true;
  });
}

const entry = (name: string | Buffer, more: Partial<CraftEntry> = {}): CraftEntry => ({
  name,
  data: Buffer.from('<Queue/>'),
  ...more,
});
const xml = (name: string, text = `<JobDefinition><Name>${name}</Name></JobDefinition>`): CarEntry => ({
  name,
  data: Buffer.from(text),
});
const MiB = 1024 * 1024;

describe('CAR archives: reading hostile zips', () => {
  it('refuses names that could leave a folder or mean another file (zip slip)', async () => {
    const cases: Array<[string, RegExp]> = [
      ['../../x', /"\.\.\/\.\.\/x".*"\.\." path segment/],
      ['/etc/x', /absolute path/],
      ['C:\\x', /backslash|drive letter/],
      ['C:/x', /drive letter/],
      ['..\\x', /backslash/],
      ['a/../../x', /"\.\." path segment/],
      ['a/./b.xml', /"\." path segment/],
      ['a//b.xml', /empty path segment/],
      ['a\u0000b', /NUL or control character/],
      ['a\nb.xml', /NUL or control character/],
      ['a\u0085b.xml', /control character/],
      [`JobDefinition/${'x'.repeat(1020)}`, /an entry name is 1034 bytes long; at most 1024/],
    ];
    for (const [name, message] of cases) await refused(craftZip([entry(name)]), 422, message);
    await refused(craftZip([entry('x'.repeat(60_000))]), 422, /^an entry name is 60000 bytes long; at most 1024/);
  });

  it('refuses an absolute or escaping folder entry, and skips ordinary folder entries', async () => {
    await refused(craftZip([entry('/etc/')]), 422, /absolute path/);
    await refused(craftZip([entry('../up/')]), 422, /"\.\." path segment/);
    const entries = await readCar(craftZip([entry('META-INF/'), entry('META-INF/export-info.xml')]));
    assert.deepEqual(
      entries.map((e) => e.name),
      ['META-INF/export-info.xml'],
    );
  });

  it('accepts a name of exactly 1024 bytes', async () => {
    const name = `JobDefinition/${'x'.repeat(1024 - 14)}`;
    assert.equal((await readCar(craftZip([entry(name)])))[0]?.name, name);
  });

  it('refuses symbolic links and other entries that are not regular files', async () => {
    const link = entry('JobDefinition/GLOBAL.A.xml', {
      data: Buffer.from('/etc/passwd'),
      versionMadeBy: 0x0314,
      externalAttributes: 0o120777 * 0x10000,
    });
    await refused(craftZip([link]), 422, /"JobDefinition\/GLOBAL\.A\.xml" is a symbolic link/);
    await refused(craftZip([entry('fifo', { externalAttributes: 0o010644 * 0x10000 })]), 422, /not a regular file/);
    await refused(craftZip([entry('dir', { externalAttributes: 0o040755 * 0x10000 })]), 422, /not a regular file/);
  });

  it('refuses encrypted entries and unknown compression methods', async () => {
    await refused(craftZip([entry('a.xml', { flags: 0x1 })]), 422, /"a\.xml" is encrypted/);
    await refused(craftZip([entry('a.xml', { method: 12 })]), 422, /unsupported compression method 12/);
  });

  it('refuses names that are not valid UTF-8, or not ASCII without the UTF-8 flag', async () => {
    const invalid = Buffer.from([0x61, 0xff, 0xfe, 0x2e, 0x78]);
    await refused(craftZip([entry(invalid, { utf8: true })]), 422, /bytes 61fffe2e78\) is not valid UTF-8/);
    const overlong = Buffer.from([0x61, 0xc0, 0xaf]); // "/" encoded in two bytes, a classic filter bypass
    await refused(craftZip([entry(overlong, { utf8: true })]), 422, /not valid UTF-8/);
    const latin1 = Buffer.from('caf\u00e9.xml', 'latin1');
    await refused(craftZip([entry(latin1, { utf8: false })]), 422, /is not ASCII and not marked as UTF-8/);
    const flaggedLess = Buffer.from('caf\u00e9.xml', 'utf8');
    await refused(craftZip([entry(flaggedLess, { utf8: false })]), 422, /not marked as UTF-8/);
    assert.equal((await readCar(craftZip([entry('caf\u00e9.xml')])))[0]?.name, 'caf\u00e9.xml');
    assert.equal((await readCar(craftZip([entry(Buffer.from('plain.xml'), { utf8: false })])))[0]?.name, 'plain.xml');
  });

  it('refuses the same name twice, names equal ignoring case, and a file that is also a folder', async () => {
    await refused(craftZip([entry('a.xml'), entry('a.xml')]), 422, /holds entry "a\.xml" twice/);
    await refused(
      craftZip([entry('JobDefinition/GLOBAL.A.xml'), entry('jobdefinition/global.a.xml')]),
      422,
      /"JobDefinition\/GLOBAL\.A\.xml" and "jobdefinition\/global\.a\.xml" differ only in case/,
    );
    await refused(craftZip([entry('Library/x'), entry('library/X/y')]), 422, /"Library\/x" is also the folder of/);
  });

  it('refuses overlapping entries (Fifield non-recursive bombs)', async () => {
    const kernel = entry('kernel', { data: Buffer.alloc(100_000) });
    const shared = [kernel, entry('a', { sameDataAs: 0 }), entry('b', { sameDataAs: 0 })];
    await refused(craftZip(shared), 422, /entries "kernel" and "a" overlap/);
    // The first entry's declared data (8 bytes really) runs 10 bytes into the second entry's local header.
    const quoting = [entry('first', { method: 0, compressedSize: 18, uncompressedSize: 18 }), entry('b')];
    await refused(craftZip(quoting), 422, /entries "first" and "b" overlap/);
  });

  it('refuses more entries than allowed, before reading them', async () => {
    const eleven = craftZip(Array.from({ length: 11 }, (_, i) => entry(`e${i}.xml`)));
    await refused(eleven, 422, /has 11 entries; at most 10 are allowed/, { maxEntries: 10 });
    assert.equal((await readCar(eleven, { maxEntries: 11 })).length, 11);
    // An end record claiming 65,535 entries is refused at once under the default cap of 50,000.
    await refused(craftZip([entry('a.xml')], { entryCount: 0xffff }), 422, /65535 entries; at most 50000/);
  });

  it('answers 422, never an unhandled error or a hang, for what is not a zip', async () => {
    const good = craftZip([entry('a.xml'), entry('b.xml')]);
    await refused(Buffer.from('PK\u0003\u0004 not really'), 422, /not a valid zip archive/);
    await refused(Buffer.alloc(0), 422, /not a valid zip archive/);
    await refused(good.subarray(0, good.length - 5), 422, /not a valid zip archive/);
    await refused(good.subarray(40), 422, /not a valid zip archive|no valid local header/);
    await refused(craftZip([entry('a.xml')], { entryCount: 3 }), 422, /not a valid zip archive/);
    await refused(craftZip([entry('a.xml', { raw: Buffer.from([0xff, 0xff, 0xff]) })]), 422, /corrupt compressed/);
    await refused(craftZip([entry('a.xml', { crc: 1234 })]), 422, /fails its CRC-32 check/);
    await refused(
      craftZip([entry('a.xml', { uncompressedSize: 100 })]),
      422,
      /inflates to 8 bytes, not the declared 100/,
    );
    await refused(
      craftZip([entry('s.xml', { method: 0, compressedSize: 4, uncompressedSize: 8 })]),
      422,
      /not a valid zip archive: compressed\/uncompressed size mismatch/,
    );
    assert.deepEqual(await readCar(EMPTY_ZIP), []);
  });

  it('refuses an entry whose local header names another file than the central directory', async () => {
    const lying = entry('JobDefinition/GLOBAL.A.xml', { localName: '../../etc/cron.d/x' });
    await refused(craftZip([lying]), 422, /"JobDefinition\/GLOBAL\.A\.xml" has another name in its local header/);
  });

  it('returns a nested zip as opaque bytes, never expanded', async () => {
    const inner = craftZip([entry('../../evil'), entry('x', { data: Buffer.alloc(10 * MiB) })]);
    const entries = await readCar(craftZip([entry('Library/GLOBAL.Lib/inner.zip', { data: inner })]));
    assert.equal(entries.length, 1);
    assert.ok(entries[0]?.data.equals(inner));
  });
});

describe('CAR archives: inflation caps', () => {
  it('stops a 1 GiB entry that declares 1 KB as soon as it passes 1 KB (422), holding little memory', async () => {
    const bomb = craftZip([entry('bomb.xml', { raw: zeroBomb(1024), uncompressedSize: 1024 })]);
    assert.ok(bomb.length < 2 * MiB, `the bomb is small: ${bomb.length} bytes`);
    const before = process.memoryUsage().rss;
    await refused(bomb, 422, /"bomb\.xml" inflates to more than its declared 1024 bytes/);
    const grown = (process.memoryUsage().rss - before) / MiB;
    assert.ok(grown < 50, `RSS grew ${grown.toFixed(1)} MiB`);
  });

  it('stops a 1 GiB entry that declares the cap once the inflated bytes pass 16 MiB (413), holding little memory', async () => {
    const bomb = craftZip([entry('bomb.xml', { raw: zeroBomb(1024), uncompressedSize: CAR_LIMITS.maxEntryBytes })]);
    const before = process.memoryUsage().rss;
    await refused(bomb, 413, /"bomb\.xml" inflates to more than 16 MiB/);
    const grown = (process.memoryUsage().rss - before) / MiB;
    assert.ok(grown < 50, `RSS grew ${grown.toFixed(1)} MiB`);
  });

  it('refuses at once an entry or archive that declares more than the caps (413)', async () => {
    await refused(
      craftZip([entry('big', { raw: zeroBomb(1), uncompressedSize: 1024 * MiB })]),
      413,
      /declares 1073741824 bytes/,
    );
    const three = Array.from({ length: 3 }, (_, i) => entry(`e${i}`, { data: Buffer.alloc(40_000, i), method: 0 }));
    await refused(craftZip(three), 413, /archive declares 120000 bytes; at most 100000/, { maxTotalBytes: 100_000 });
  });

  it('judges the ratio only past the floor: small repetitive XML passes, a large one over 100:1 does not', async () => {
    const repetitive = Buffer.from('<JobDefinition><Name>x</Name></JobDefinition>\n'.repeat(20_000)); // ~920 KB
    assert.ok(deflateRawSync(repetitive).length * 100 < repetitive.length, 'more than 100:1');
    const [read] = await readCar(craftZip([entry('JobDefinition/GLOBAL.X.xml', { data: repetitive })]));
    assert.ok(read?.data.equals(repetitive));
    const zeros = entry('zeros', { raw: zeroBomb(10), uncompressedSize: 10 * MiB, crc: crc32(Buffer.alloc(10 * MiB)) });
    await refused(craftZip([zeros]), 413, /"zeros" inflates to more than 100 times its compressed size/);
    assert.equal((await readCar(craftZip([zeros]), { maxRatio: 2000 }))[0]?.data.length, 10 * MiB);
  });
});

describe('CAR archives: writing', () => {
  const sample: CarEntry[] = [
    xml('META-INF/export-info.xml', '<export-info><user>admin</user></export-info>'),
    xml('JobDefinition/GLOBAL.Zeta.xml'),
    xml('JobDefinition/GLOBAL.Alpha.xml'),
    xml('Queue/GLOBAL.N\u00e4chte.xml'),
    { name: 'Library/GLOBAL.Lib/empty.txt', data: Buffer.alloc(0) },
    {
      name: 'Library/GLOBAL.Lib/big.bin',
      data: Buffer.from(createHash('sha512').update('x').digest('hex').repeat(2000)),
    },
  ];

  it('reads back what it wrote, sorted by name in byte order', async () => {
    const entries = await readCar(await writeCar(sample));
    const sorted = [...sample].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    assert.deepEqual(entries, sorted);
    assert.equal(entries[0]?.name, 'JobDefinition/GLOBAL.Alpha.xml');
  });

  it('writes the same bytes for the same entries, whatever their order', async () => {
    const a = await writeCar(sample);
    const b = await writeCar([...sample].reverse());
    assert.ok(a.equals(b));
  });

  it('writes 1980-01-01 00:00, mode 0644, deflate and no comment in every time zone', async () => {
    const script = `
      const { writeCar } = await import(${JSON.stringify(new URL('../../../src/car/archive-writer.ts', import.meta.url).href)});
      const { createHash } = await import('node:crypto');
      const bytes = await writeCar([{ name: 'a.xml', data: Buffer.from('<a/>') }, { name: 'b/c.xml', data: Buffer.from('c') }]);
      process.stdout.write(createHash('sha256').update(bytes).digest('hex') + ' ' + bytes.toString('base64'));`;
    const run = promisify(execFile);
    const inZone = async (tz: string) => {
      const args = ['--import', 'tsx', '--input-type=module', '-e', script];
      return (await run(process.execPath, args, { cwd: ROOT, env: { ...process.env, TZ: tz } })).stdout.split(' ');
    };
    const [utc, tokyo, kiritimati] = await Promise.all([
      inZone('UTC'),
      inZone('Asia/Tokyo'),
      inZone('Pacific/Kiritimati'),
    ]);
    assert.equal(utc?.[0], tokyo?.[0]);
    assert.equal(utc?.[0], kiritimati?.[0]);
    const bytes = Buffer.from(utc?.[1] ?? '', 'base64');
    assert.equal(bytes.readUInt32LE(0), 0x04034b50);
    assert.equal(bytes.readUInt16LE(8), 8, 'deflate');
    assert.equal(bytes.readUInt16LE(10), 0, 'time 00:00:00');
    assert.equal(bytes.readUInt16LE(12), (1 << 5) | 1, 'date 1980-01-01');
    assert.equal(bytes.readUInt16LE(28), 0, 'no extra field (no time stamp in UTC)');
    assert.equal(bytes.readUInt16LE(bytes.length - 2), 0, 'no archive comment');
    const cd = bytes.readUInt32LE(bytes.length - 6);
    assert.equal(bytes.readUInt32LE(cd + 38) >>> 16, 0o100644, 'mode 0644 regular file');
  });

  it('refuses to write a name readCar would refuse', async () => {
    await refused(writeCar([xml('y'.repeat(1025))]), 422, /is longer than 1024 bytes/);
    for (const name of ['../x', '/abs', 'a\\b', 'C:x', 'a//b', 'dir/', '', 'a\u0001b', '\ud800.xml'])
      await refused(writeCar([xml(name)]), 422, /unsafe entry name/);
    await refused(writeCar([xml('a.xml'), xml('a.xml')]), 422, /twice/);
    await refused(writeCar([xml('Queue/A.xml'), xml('queue/a.xml')]), 422, /differ only in case/);
  });

  it('gives the bytes the writer gave before it streamed (golden digest), piece by piece or whole', async () => {
    const entries: CarEntry[] = [
      { name: 'Queue/GLOBAL.Q.xml', data: Buffer.from('<Queue/>\n') },
      {
        name: 'JobDefinition/GLOBAL.A.xml',
        data: Buffer.from('<?xml version="1.0"?>\n<JobDefinition>\u00e9</JobDefinition>\n'.repeat(3)),
      },
      { name: 'META-INF/export-info.xml', data: Buffer.from('info') },
      { name: 'Library/GLOBAL.L/big.jar', data: Buffer.alloc(100_000, 7) },
      { name: 'Library/GLOBAL.L/empty.txt', data: Buffer.alloc(0) },
    ];
    const golden = 'add388278e0dd2c986deaa2377b4776c2f84deae2e10beddd89db3c1c75bf29d';
    const whole = await writeCar(entries);
    assert.equal(createHash('sha256').update(whole).digest('hex'), golden);
    const pieces = async (list: CarEntry[]) => {
      const parts: Buffer[] = [];
      for await (const part of await carChunks(list.map((e) => ({ name: e.name, data: async () => e.data }))))
        parts.push(part);
      return parts;
    };
    assert.ok(Buffer.concat(await pieces(entries)).equals(whole));
    // Incompressible entries past the piece size (64 KiB) come in several pieces, still writeCar's bytes.
    const large = [1, 2, 3].map((i) => ({ name: `Library/GLOBAL.L/r${i}.bin`, data: randomBytes(40_000) }));
    const parts = await pieces(large);
    assert.ok(parts.length > 1, 'written in pieces');
    assert.ok(Buffer.concat(parts).equals(await writeCar(large)));
  });

  it('streamed: refuses names before producing anything, and leaves out an entry whose content is gone', async () => {
    let asked = 0;
    const source = (name: string) => ({
      name,
      data: () => {
        asked++;
        return Buffer.from(name);
      },
    });
    await assert.rejects(carChunks([source('a.xml'), source('../b.xml')]), /unsafe entry name/);
    await assert.rejects(carChunks([source('a.xml'), source('A.xml')]), /differ only in case/);
    assert.equal(asked, 0);
    const parts: Buffer[] = [];
    for await (const part of await carChunks([
      source('b.xml'),
      { name: 'gone.xml', data: () => undefined },
      source('a.xml'),
    ]))
      parts.push(part);
    const back = await readCar(Buffer.concat(parts));
    assert.deepEqual(
      back.map((e) => [e.name, e.data.toString()]),
      [
        ['a.xml', 'a.xml'],
        ['b.xml', 'b.xml'],
      ],
    );
  });
});
