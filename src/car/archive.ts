/**
 * CAR archives as bytes. A CAR is a zip that comes from outside (an import), so reading it is hostile-input
 * parsing: nothing is ever written to disk, every name is checked from its raw bytes, and every entry is inflated
 * through a counter that stops at the caps however small the archive claims the entry is
 * (docs/architecture.md §14). Writing them is archive-writer.ts; the names' rules are
 * entry-names.ts.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createInflateRaw, crc32, inflateRawSync } from 'node:zlib';
import { type Entry, fromBuffer, type ZipFile as ZipReader } from 'yauzl';
import { errorCode, errorMessage, type MillraceError, tooLarge, unprocessable } from '../errors.ts';
import { loopYielder } from '../loop-yield.ts';
import { checkCollisions, checkName, decodeName } from './entry-names.ts';
import {
  ENCRYPTED_FLAGS,
  LOCAL_HEADER_SIGNATURE,
  LOCAL_HEADER_SIZE,
  S_IFDIR,
  S_IFLNK,
  S_IFMT,
  S_IFREG,
  SMALL_ENTRY,
} from './zip-format.ts';

const EMPTY = Buffer.alloc(0);

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
  record: Listed;
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
  return { record, start, dataStart, end };
}

/**
 * Refuses entries whose [local header, end of data) ranges overlap: that is how non-recursive zip bombs
 * (Fifield) make many large files out of one small kernel. Then refuses a local name that differs from the
 * central one, which other tools would extract under another name.
 */
function checkSpans(bytes: Buffer, spans: readonly Span[]): void {
  const ordered = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  let previous: Span | undefined;
  for (const span of ordered) {
    if (previous && span.start < previous.end)
      throw unprocessable(
        `entries ${JSON.stringify(previous.record.name)} and ${JSON.stringify(span.record.name)} overlap (overlapping entries are a zip bomb)`,
      );
    if (!previous || span.end > previous.end) previous = span;
  }
  for (const { record, start } of spans) {
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
    const over = errorCode(err) === 'ERR_BUFFER_TOO_LARGE' ? check(declared + 1) : undefined;
    if (over) throw over;
    throw unprocessable(`entry ${JSON.stringify(record.name)} has corrupt compressed data: ${errorMessage(err)}`);
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
    checkSpans(bytes, spans);

    const result: CarEntry[] = [];
    let total = 0;
    // A large archive must not hold the event loop: by time, since `visit` may parse each entry too.
    const pause = loopYielder();
    for (const span of spans) {
      const { record } = span;
      if (record.isDirectory) continue;
      await pause();
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
