import { Buffer } from 'node:buffer';
import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * Zip bytes built by hand (local headers, central directory, end record), so tests can make the hostile
 * archives a zip library refuses to write: unsafe or invalid names, symlinks, duplicates, lying sizes,
 * overlapping entries, bogus entry counts.
 */

export interface CraftEntry {
  /** A string is written as UTF-8; a Buffer is written as it is (for invalid or non-UTF-8 names). */
  name: string | Buffer;
  /** The uncompressed content (default empty). */
  data?: Buffer;
  /** 0 stored, 8 deflated (default 8). */
  method?: number;
  /** The file data as written, instead of `data` compressed (e.g. a bomb's deflate stream). */
  raw?: Buffer;
  /** Declared sizes and CRC; default: the real ones. */
  uncompressedSize?: number;
  compressedSize?: number;
  crc?: number;
  /** The UTF-8 flag (bit 11); default: set for string names. */
  utf8?: boolean;
  /** More general-purpose flag bits, e.g. 1 = encrypted. */
  flags?: number;
  /** Default 0x031e: made by Unix, zip 3.0. */
  versionMadeBy?: number;
  /** Default: a regular file, mode 0644 (0o100644 << 16); a name ending in `/` gets a folder. */
  externalAttributes?: number;
  /** A different name in the local header than in the central directory. */
  localName?: string;
  /** Writes no local header or data: the central record points at entry #i's local header (Fifield). */
  sameDataAs?: number;
}

export interface CraftOptions {
  /** The entry count written in the end record, instead of the real one. */
  entryCount?: number;
}

const u16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};

const DOS_TIME = 0;
const DOS_DATE = (1 << 5) | 1; // 1980-01-01

export function craftZip(entries: readonly CraftEntry[], options: CraftOptions = {}): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  const central: Buffer[] = [];
  const written: Array<{ offset: number; method: number; crc: number; csize: number; usize: number }> = [];
  for (const e of entries) {
    const name = typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : e.name;
    const data = e.data ?? Buffer.alloc(0);
    const method = e.method ?? 8;
    const raw = e.raw ?? (method === 8 ? deflateRawSync(data) : data);
    const flags = (e.flags ?? 0) | ((e.utf8 ?? typeof e.name === 'string') ? 0x800 : 0);
    let at = {
      offset,
      method,
      crc: e.crc ?? crc32(data),
      csize: e.compressedSize ?? raw.length,
      usize: e.uncompressedSize ?? data.length,
    };
    if (e.sameDataAs !== undefined) {
      const target = written[e.sameDataAs];
      if (!target) throw new Error(`sameDataAs ${e.sameDataAs}: no such earlier entry`);
      at = target;
    } else {
      const localName = e.localName === undefined ? name : Buffer.from(e.localName, 'utf8');
      const local = Buffer.concat([
        u32(0x04034b50),
        u16(20),
        u16(flags),
        u16(method),
        u16(DOS_TIME),
        u16(DOS_DATE),
        u32(at.crc),
        u32(at.csize),
        u32(at.usize),
        u16(localName.length),
        u16(0),
        localName,
      ]);
      parts.push(local, raw);
      offset += local.length + raw.length;
    }
    written.push(at);
    const isFolder = name[name.length - 1] === 0x2f;
    const attributes = e.externalAttributes ?? (isFolder ? (0o40755 << 16) | 0x10 : 0o100644 << 16);
    central.push(
      Buffer.concat([
        u32(0x02014b50),
        u16(e.versionMadeBy ?? 0x031e),
        u16(20),
        u16(flags),
        u16(at.method),
        u16(DOS_TIME),
        u16(DOS_DATE),
        u32(at.crc),
        u32(at.csize),
        u32(at.usize),
        u16(name.length),
        u16(0),
        u16(0),
        u16(0),
        u16(0),
        u32(attributes),
        u32(at.offset),
        name,
      ]),
    );
  }
  const directory = Buffer.concat(central);
  const count = options.entryCount ?? entries.length;
  const end = Buffer.concat([
    u32(0x06054b50),
    u16(0),
    u16(0),
    u16(Math.min(count, 0xffff)),
    u16(Math.min(count, 0xffff)),
    u32(directory.length),
    u32(offset),
    u16(0),
  ]);
  return Buffer.concat([...parts, directory, end]);
}

/**
 * A raw deflate stream that inflates to `mebibytes` MiB of zeros, built without ever holding them: one MiB of
 * zeros is deflated once and ended with a full flush (so it refers to nothing before it and ends on a byte
 * boundary), repeated, and closed with an empty final block. 1 GiB costs about 1 MB.
 */
export function zeroBomb(mebibytes: number): Buffer {
  const block = deflateRawSync(Buffer.alloc(1024 * 1024), { finishFlush: constants.Z_FULL_FLUSH });
  const parts: Buffer[] = new Array(mebibytes).fill(block);
  parts.push(Buffer.from([0x03, 0x00])); // final fixed-Huffman block holding only end-of-block
  return Buffer.concat(parts);
}

/** An empty end record only: a valid zip with no entries. */
export const EMPTY_ZIP = craftZip([]);
