/**
 * Writing CARs (docs/architecture.md §14): deterministic, so that the same objects export to the same bytes, and
 * a piece at a time, so that an export is sent while it is written.
 */
import { Buffer } from 'node:buffer';
import { promisify } from 'node:util';
import { crc32, deflateRaw, deflateRawSync } from 'node:zlib';
import { tooLarge, unprocessable } from '../errors.ts';
import { loopYielder } from '../loop-yield.ts';
import type { CarEntry } from './archive.ts';
import { checkCollisions, checkName } from './entry-names.ts';
import { LOCAL_HEADER_SIGNATURE, S_IFREG, SMALL_ENTRY, UTF8_FLAG } from './zip-format.ts';

const deflateRawAsync = promisify(deflateRaw);

const u16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

const DOS_TIME = 0; // 00:00:00
const DOS_DATE = (1 << 5) | 1; // 1980-01-01
const MADE_BY_UNIX = 0x031e; // so that readers take the high 16 bits of the attributes as a Unix mode
const REGULAR_0644 = (S_IFREG | 0o644) * 0x10000;

/** One entry's content deflated, with what its headers say of the content (packEntry). */
export interface PackedEntry {
  crc: number;
  size: number;
  packed: Buffer;
}

/**
 * One entry of a CAR being written: its content is asked for only when its turn comes, as bytes or already packed
 * (undefined: left out).
 */
export interface CarSource {
  name: string;
  data(): Buffer | PackedEntry | undefined | Promise<Buffer | PackedEntry | undefined>;
}

/** Deflates one entry's content as writeCar does, so that a writer can keep it small until its turn comes. */
export async function packEntry(data: Buffer): Promise<PackedEntry> {
  const packed = data.length <= SMALL_ENTRY ? deflateRawSync(data) : await deflateRawAsync(data);
  // deflateRawSync answers a view of a fresh 64 KiB output buffer: kept as is, each packed entry of ~1 KiB would
  // hold all of it (writeCar held every entry's so until its final concat).
  return {
    crc: crc32(data),
    size: data.length,
    packed: packed.buffer.byteLength > 2 * packed.length ? Buffer.from(packed) : packed,
  };
}

/**
 * Writes a CAR deterministically: entries sorted by name (byte order), every timestamp 1980-01-01 00:00:00 (DOS
 * fields written directly, so no time zone is involved), mode 0o100644, deflate, no extra fields, no comment: the
 * same entries give the same bytes. Throws 422 for a name readCar would refuse, 413 beyond plain zip (no zip64).
 *
 * Written by hand rather than with yazl: yazl starts one zlib context per added buffer at once and rescans its
 * entry list for every entry, so 1,000 small entries took 0.6 s and 50,000 took 48 s (this takes well under 1 s).
 */
export async function writeCar(entries: readonly CarEntry[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of await carChunks(entries.map((e) => ({ name: e.name, data: () => e.data }))))
    parts.push(part);
  return Buffer.concat(parts);
}

/**
 * The bytes of writeCar, a piece at a time, so that an export is sent while it is written: each entry's content is
 * asked for, deflated and handed on in name order, and only the central directory (about 100 bytes an entry) is
 * kept until the end. The names are checked first, before anything is produced, so a refused name is an error
 * answer and not a broken download; the event loop is let go every few ms throughout.
 */
export async function carChunks(sources: readonly CarSource[]): Promise<AsyncGenerator<Buffer>> {
  const pause = loopYielder();
  const named: Array<{ source: CarSource; bytes: Buffer }> = [];
  for (const source of sources) {
    await pause();
    const bytes = Buffer.from(source.name, 'utf8');
    // A lone surrogate would be written as U+FFFD and read back as another name.
    if (bytes.toString('utf8') !== source.name)
      throw unprocessable(`unsafe entry name ${JSON.stringify(source.name)}: it is not valid Unicode`);
    checkName(source.name);
    named.push({ source, bytes });
  }
  await checkCollisions(sources.map((e) => e.name));
  if (sources.length > 0xffff) throw tooLarge(`a CAR holds at most ${0xffff} entries, not ${sources.length}`);
  return deflatedEntries(named.sort(byNameBytes(sources)));
}

/**
 * compareNames' order without encoding in every comparison (measurably slow for many names: bench/README.md):
 * below U+D800, UTF-16 code units sort as UTF-8 bytes do, so such names compare as strings, faster than
 * Buffer.compare.
 */
function byNameBytes(
  sources: readonly CarSource[],
): (a: { source: CarSource; bytes: Buffer }, b: { source: CarSource; bytes: Buffer }) => number {
  if (sources.some((s) => /[\uD800-\uFFFF]/.test(s.name))) return (a, b) => Buffer.compare(a.bytes, b.bytes);
  return (a, b) => (a.source.name < b.source.name ? -1 : a.source.name > b.source.name ? 1 : 0);
}

/** Entries are handed on in pieces of about this size: a write to the socket per ~1 KiB entry costs more. */
const PIECE_BYTES = 64 * 1024;

async function* deflatedEntries(sorted: ReadonlyArray<{ source: CarSource; bytes: Buffer }>): AsyncGenerator<Buffer> {
  const central: Buffer[] = [];
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const pause = loopYielder(); // long exports must not hold the event loop
  for (const { source, bytes: name } of sorted) {
    await pause();
    const content = await source.data();
    if (content === undefined) continue;
    const { crc, size, packed } = Buffer.isBuffer(content) ? await packEntry(content) : content;
    // version needed 2.0, UTF-8 names, deflate, the fixed time, CRC, sizes, name length, no extra field
    const common = [u16(20), u16(UTF8_FLAG), u16(8), u16(DOS_TIME), u16(DOS_DATE), u32(crc)];
    const sizes = [u32(packed.length), u32(size), u16(name.length), u16(0)];
    const local = Buffer.concat([u32(LOCAL_HEADER_SIGNATURE), ...common, ...sizes, name]);
    // no comment, disk 0, no internal attributes
    const tail = [u16(0), u16(0), u16(0), u32(REGULAR_0644), u32(offset), name];
    central.push(Buffer.concat([u32(0x02014b50), u16(MADE_BY_UNIX), ...common, ...sizes, ...tail]));
    offset += local.length + packed.length;
    if (offset > 0xffffffff) throw tooLarge('a CAR is at most 4 GiB');
    pending.push(local, packed);
    pendingBytes += local.length + packed.length;
    if (pendingBytes >= PIECE_BYTES) {
      yield Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
    }
  }
  const directory = Buffer.concat(central);
  const count = u16(central.length);
  const end = [u32(0x06054b50), u16(0), u16(0), count, count, u32(directory.length), u32(offset), u16(0)];
  yield Buffer.concat([...pending, directory, ...end]);
}
