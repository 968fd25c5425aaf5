/**
 * CAR archives as bytes. A CAR is a zip that comes from outside (an import), so reading it is hostile-input
 * parsing: nothing is ever written to disk, every name is checked from its raw bytes, and every entry is inflated
 * through a counter that stops at the caps however small the archive claims the entry is
 * (docs/architecture.md §14). Writing is deterministic so that the same objects export to
 * the same bytes.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { createInflateRaw, crc32, deflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';
import { type Entry, fromBuffer, type ZipFile as ZipReader } from 'yauzl';
import { type MillraceError, tooLarge, unprocessable } from '../errors.ts';
import { loopYielder } from '../loop-yield.ts';

export interface CarEntry {
  name: string;
  /** Empty for an entry read without keeping it (readCar's `retain`); its digest is then in sha256. */
  data: Buffer;
  /** Hex SHA-256 of the inflated data, set for entries that were not kept. */
  sha256?: string;
}

export interface CarLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  maxRatio: number;
  ratioFloorBytes: number;
}

const MiB = 1024 * 1024;

export const CAR_LIMITS: CarLimits = Object.freeze({
  maxEntries: 50_000,
  maxEntryBytes: 16 * MiB,
  maxTotalBytes: 512 * MiB,
  maxRatio: 100,
  // Exported object XML is very repetitive and compresses far beyond 100:1, so small entries are never judged
  // by their ratio; only an entry that has already inflated past this is.
  ratioFloorBytes: 1 * MiB,
});

/** Longest entry name accepted, in bytes: object names are short, and a long name only serves an attack. */
export const MAX_NAME_BYTES = 1024;

const UTF8_FLAG = 0x800;
const ENCRYPTED_FLAGS = 0x1 | 0x40; // traditional and strong encryption
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_SIZE = 30;

const deflateRawAsync = promisify(deflateRaw);
const EMPTY = Buffer.alloc(0);

/** Entries up to this size are inflated and deflated synchronously: a thread-pool round trip costs more. */
const SMALL_ENTRY = 64 * 1024;

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

/** Byte order of the UTF-8 names: the order entries are written and digests are listed in. */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Why `name` (already decoded) could escape a folder or mean different files on different systems; else undefined. */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `is longer than ${MAX_NAME_BYTES} bytes`;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return 'contains a NUL or control character';
  }
  if (name.includes('\\')) return 'contains a backslash';
  if (name.startsWith('/')) return 'is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'starts with a drive letter';
  for (const segment of name.split('/')) {
    if (segment === '') return 'has an empty path segment';
    if (segment === '.' || segment === '..') return `has a "${segment}" path segment`;
  }
  return undefined;
}

function checkName(name: string): void {
  const problem = nameProblem(name);
  if (problem) throw unprocessable(`unsafe entry name ${JSON.stringify(name)}: it ${problem}`);
}

/** Case-folded form: two names that fold alike would be one file on Windows and macOS file systems. */
const fold = (name: string): string => name.normalize('NFC').toUpperCase().toLowerCase();

/**
 * Names that are one file on some file system: the same name twice, names equal ignoring case, or a file that is
 * also another entry's folder (`a` and `a/b`), which no file system can hold.
 */
async function checkCollisions(names: readonly string[]): Promise<void> {
  const pause = loopYielder(); // many names take long enough to hold up other requests
  const files = new Map<string, string>();
  for (const name of names) {
    await pause();
    const key = fold(name);
    const seen = files.get(key);
    if (seen === name) throw unprocessable(`the archive holds entry ${JSON.stringify(name)} twice`);
    if (seen !== undefined)
      throw unprocessable(`entries ${JSON.stringify(seen)} and ${JSON.stringify(name)} differ only in case`);
    files.set(key, name);
  }
  for (const name of names) {
    await pause();
    const segments = fold(name).split('/');
    for (let i = 1; i < segments.length; i++) {
      const file = files.get(segments.slice(0, i).join('/'));
      if (file !== undefined)
        throw unprocessable(`entry ${JSON.stringify(file)} is also the folder of ${JSON.stringify(name)}`);
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The name from its raw bytes: flagged UTF-8 must decode strictly, unflagged must be ASCII (no code-page guess). */
function decodeName(raw: Buffer, flags: number): string {
  // Checked before decoding so that a 64 KB name is not quoted whole in the message.
  if (raw.length > MAX_NAME_BYTES)
    throw unprocessable(`an entry name is ${raw.length} bytes long; at most ${MAX_NAME_BYTES} are allowed`);
  if (flags & UTF8_FLAG) {
    try {
      return utf8.decode(raw);
    } catch {
      throw unprocessable(
        `entry name ${JSON.stringify(raw.toString('utf8'))} (bytes ${raw.toString('hex')}) is not valid UTF-8`,
      );
    }
  }
  if (raw.some((b) => b >= 0x80))
    throw unprocessable(
      `entry name ${JSON.stringify(raw.toString('latin1'))} (bytes ${raw.toString('hex')}) is not ASCII and not marked as UTF-8`,
    );
  return raw.toString('ascii');
}

function limitsOf(given: Partial<CarLimits>): CarLimits {
  const limits = { ...CAR_LIMITS };
  // An explicit `undefined` must not switch a cap off.
  for (const key of Object.keys(limits) as (keyof CarLimits)[]) {
    const value = given[key];
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

function openZip(bytes: Buffer): Promise<ZipReader> {
  return new Promise((resolve, reject) => {
    try {
      fromBuffer(
        bytes,
        { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, strictFileNames: false },
        (err, zip) => (err ? reject(notAZip(err)) : resolve(zip)),
      );
    } catch (err) {
      reject(notAZip(err));
    }
  });
}

const notAZip = (err: unknown): MillraceError =>
  unprocessable(`not a valid zip archive: ${err instanceof Error ? err.message : String(err)}`);

/** Every central-directory record. yauzl reads them one by one; its one 'error' event always has a listener. */
function readRecords(zip: ZipReader): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const records: Entry[] = [];
    zip.on('error', (err: unknown) => reject(notAZip(err)));
    zip.on('entry', (entry: Entry) => {
      records.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(records));
    zip.readEntry();
  });
}

interface Listed {
  entry: Entry;
  name: string;
  isDirectory: boolean;
}

/** The checks one central-directory record allows, before any byte is inflated. */
function checkRecord(entry: Entry, limits: CarLimits): Listed {
  const name = decodeName(entry.fileNameRaw, entry.generalPurposeBitFlag);
  const isDirectory = name.endsWith('/');
  checkName(isDirectory ? name.slice(0, -1) : name);
  const quoted = JSON.stringify(name);
  if (entry.generalPurposeBitFlag & ENCRYPTED_FLAGS) throw unprocessable(`entry ${quoted} is encrypted`);
  // Unix tools keep the file type in the high 16 bits; only regular files (and folders named `…/`) are content.
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (type === S_IFLNK) throw unprocessable(`entry ${quoted} is a symbolic link`);
  if (type !== 0 && type !== S_IFREG && !(type === S_IFDIR && isDirectory))
    throw unprocessable(`entry ${quoted} is not a regular file (type ${type.toString(8)})`);
  if (!isDirectory) {
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
      throw unprocessable(`entry ${quoted} uses unsupported compression method ${entry.compressionMethod}`);
    // A declared size is never trusted to let an entry in, but it may keep one out before any work.
    if (entry.uncompressedSize > limits.maxEntryBytes)
      throw tooLarge(
        `entry ${quoted} declares ${entry.uncompressedSize} bytes; at most ${limits.maxEntryBytes} are allowed`,
      );
  }
  return { entry, name, isDirectory };
}

interface Span {
  name: string;
  start: number;
  dataStart: number;
  end: number;
}

/** Where each record's local header and data lie, read from the local header itself (the central copy can lie). */
function spanOf(bytes: Buffer, record: Listed): Span {
  const { entry, name } = record;
  const start = entry.relativeOffsetOfLocalHeader;
  if (start + LOCAL_HEADER_SIZE > bytes.length || bytes.readUInt32LE(start) !== LOCAL_HEADER_SIGNATURE)
    throw unprocessable(`entry ${JSON.stringify(name)} has no valid local header`);
  const nameLength = bytes.readUInt16LE(start + 26);
  const dataStart = start + LOCAL_HEADER_SIZE + nameLength + bytes.readUInt16LE(start + 28);
  const end = dataStart + entry.compressedSize;
  if (end > bytes.length) throw unprocessable(`entry ${JSON.stringify(name)} runs past the end of the archive`);
  return { name, start, dataStart, end };
}

/**
 * Refuses entries whose [local header, end of data) ranges overlap: that is how non-recursive zip bombs
 * (Fifield) make many large files out of one small kernel. Then refuses a local name that differs from the
 * central one, which other tools would extract under another name.
 */
function checkSpans(bytes: Buffer, records: readonly Listed[], spans: readonly Span[]): void {
  const ordered = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  let previous: Span | undefined;
  for (const span of ordered) {
    if (previous && span.start < previous.end)
      throw unprocessable(
        `entries ${JSON.stringify(previous.name)} and ${JSON.stringify(span.name)} overlap (overlapping entries are a zip bomb)`,
      );
    if (!previous || span.end > previous.end) previous = span;
  }
  for (const [i, record] of records.entries()) {
    const start = (spans[i] as Span).start;
    const nameStart = start + LOCAL_HEADER_SIZE;
    if (!bytes.subarray(nameStart, nameStart + bytes.readUInt16LE(start + 26)).equals(record.entry.fileNameRaw))
      throw unprocessable(`entry ${JSON.stringify(record.name)} has another name in its local header`);
  }
}

const size = (n: number): string => (n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`);

/** Counts the bytes an entry really inflates to; returns the error that stops it, if any. */
function counter(
  record: Listed,
  limits: CarLimits,
  totalBefore: number,
): (inflated: number) => MillraceError | undefined {
  const { entry, name } = record;
  const quoted = JSON.stringify(name);
  return (inflated) => {
    if (inflated > limits.maxEntryBytes)
      return tooLarge(`entry ${quoted} inflates to more than ${size(limits.maxEntryBytes)}`);
    if (totalBefore + inflated > limits.maxTotalBytes)
      return tooLarge(`the archive inflates to more than ${size(limits.maxTotalBytes)}`);
    if (inflated > limits.ratioFloorBytes && inflated > entry.compressedSize * limits.maxRatio)
      return tooLarge(`entry ${quoted} inflates to more than ${limits.maxRatio} times its compressed size`);
    if (inflated > entry.uncompressedSize)
      return unprocessable(`entry ${quoted} inflates to more than its declared ${entry.uncompressedSize} bytes`);
    return undefined;
  };
}

/** Inflates one entry's data chunk by chunk (never all at once), stopping as soon as `check` objects. */
function inflate(raw: Buffer, name: string, check: (inflated: number) => MillraceError | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const inflater = createInflateRaw();
    const chunks: Buffer[] = [];
    let inflated = 0;
    let settled = false;
    const fail = (err: MillraceError) => {
      if (settled) return;
      settled = true;
      inflater.destroy();
      reject(err);
    };
    inflater.on('data', (chunk: Buffer) => {
      if (settled) return;
      inflated += chunk.length;
      const err = check(inflated);
      if (err) fail(err);
      else chunks.push(chunk);
    });
    inflater.on('error', (err) =>
      fail(unprocessable(`entry ${JSON.stringify(name)} has corrupt compressed data: ${err.message}`)),
    );
    inflater.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, inflated));
    });
    inflater.end(raw);
  });
}

/** A small entry in one synchronous call, bounded by its declared size (at most SMALL_ENTRY) plus one byte. */
function inflateSmall(raw: Buffer, record: Listed, check: (inflated: number) => MillraceError | undefined): Buffer {
  const declared = record.entry.uncompressedSize;
  let data: Buffer;
  try {
    data = inflateRawSync(raw, { maxOutputLength: declared + 1 });
  } catch (err) {
    // Past the declared size the counter always objects.
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw check(declared + 1) as MillraceError;
    throw unprocessable(`entry ${JSON.stringify(record.name)} has corrupt compressed data: ${(err as Error).message}`);
  }
  const err = check(data.length);
  if (err) throw err;
  return data;
}

/**
 * Reads a CAR held in memory (never writes to disk). Every entry is inflated through a counting stream that
 * aborts as soon as the bytes actually inflated pass maxEntryBytes, the running total passes maxTotalBytes, or
 * (beyond ratioFloorBytes) inflated/compressed passes maxRatio — declared sizes are not trusted. Throws 413 for
 * those caps and 422 for anything unsafe or malformed (see the checks above). Directory entries are skipped;
 * entries come back in central-directory order; nested archives are just bytes.
 */
export async function readCar(
  bytes: Buffer,
  limits: Partial<CarLimits> = {},
  options: {
    retain?: (name: string) => boolean;
    /** Sees each entry as it is inflated, before `retain` decides whether it is kept. */
    visit?: (entry: CarEntry) => void;
  } = {},
): Promise<CarEntry[]> {
  const caps = limitsOf(limits);
  const zip = await openZip(bytes);
  try {
    // The count comes from the end record, before any record is read: a claim of millions costs nothing.
    if (zip.entryCount > caps.maxEntries)
      throw unprocessable(`the archive has ${zip.entryCount} entries; at most ${caps.maxEntries} are allowed`);
    const records = (await readRecords(zip)).map((entry) => checkRecord(entry, caps));
    const files = records.filter((r) => !r.isDirectory);
    await checkCollisions(files.map((r) => r.name));
    const declared = files.reduce((sum, r) => sum + r.entry.uncompressedSize, 0);
    if (declared > caps.maxTotalBytes)
      throw tooLarge(`the archive declares ${declared} bytes; at most ${caps.maxTotalBytes} are allowed`);
    const spans = records.map((r) => spanOf(bytes, r));
    checkSpans(bytes, records, spans);

    const result: CarEntry[] = [];
    let total = 0;
    // A large archive must not hold the event loop: by time, since `visit` may parse each entry too.
    const pause = loopYielder();
    for (const [i, record] of records.entries()) {
      if (record.isDirectory) continue;
      await pause();
      const span = spans[i] as Span;
      const raw = bytes.subarray(span.dataStart, span.end);
      const check = counter(record, caps, total);
      let data: Buffer;
      if (record.entry.compressionMethod === 0) {
        const err = check(raw.length);
        if (err) throw err;
        data = Buffer.from(raw); // a copy: the result must not keep the whole archive alive
      } else if (record.entry.uncompressedSize <= SMALL_ENTRY) data = inflateSmall(raw, record, check);
      else data = await inflate(raw, record.name, check);
      const quoted = JSON.stringify(record.name);
      if (data.length !== record.entry.uncompressedSize)
        throw unprocessable(
          `entry ${quoted} inflates to ${data.length} bytes, not the declared ${record.entry.uncompressedSize}`,
        );
      if (crc32(data) !== record.entry.crc32) throw unprocessable(`entry ${quoted} fails its CRC-32 check`);
      total += data.length;
      options.visit?.({ name: record.name, data });
      // Checking an archive needs every entry inflated once, not all of them held at once.
      if (options.retain && !options.retain(record.name))
        result.push({ name: record.name, data: EMPTY, sha256: createHash('sha256').update(data).digest('hex') });
      else result.push({ name: record.name, data });
    }
    return result;
  } finally {
    zip.close();
  }
}

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
