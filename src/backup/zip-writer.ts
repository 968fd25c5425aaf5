import { createHash, type Hash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { constants, crc32, createDeflateRaw, deflateRaw, deflateRawSync } from 'node:zlib';

/**
 * A zip file written as a stream, one entry at a time, for backup archives (docs/architecture.md §17). Unlike a
 * CAR (src/car/archive.ts, built in memory and at most 4 GiB), a backup holds a whole database and every job file:
 * each entry is deflated as it is read, its CRC and sizes follow it in a data descriptor, and the zip64 records
 * are written when an entry, an offset or the entry count passes the plain format's limits, so the archive has no
 * size limit. Names are UTF-8; times are the fixed 1980-01-01 like a CAR's.
 */

const UTF8_AND_DESCRIPTOR = 0x800 | 0x8;
const DOS_DATE = (1 << 5) | 1;
const MADE_BY_UNIX = 0x031e;
const REGULAR_0600 = (0o100000 | 0o600) * 0x10000;
const MAX32 = 0xffffffff;
const OPTIONS = { level: constants.Z_BEST_SPEED };
/** Entries up to this size are deflated synchronously: a thread-pool round trip costs more. */
const SMALL = 64 * 1024;
const TINY = 256;
const deflateRawAsync = promisify(deflateRaw);

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

interface Written {
  name: Buffer;
  /** 0 stored, 8 deflated. */
  method: number;
  crc: number;
  packed: number;
  size: number;
  offset: number;
}

export class ZipWriter {
  private readonly out: WriteStream;
  private readonly entries: Written[] = [];
  private offset = 0;

  constructor(file: string) {
    // 0600: the archive holds the secret key.
    this.out = createWriteStream(file, { mode: 0o600 });
  }

  private async write(chunk: Buffer): Promise<void> {
    this.offset += chunk.length;
    if (!this.out.write(chunk)) await once(this.out, 'drain');
  }

  /**
   * Adds one entry: a buffer (deflated at once) or a stream (deflated as it is read, never held whole); answers
   * its size and SHA-256.
   */
  async add(name: string, source: Readable | Buffer): Promise<{ size: number; sha256: string }> {
    const nameBytes = Buffer.from(name, 'utf8');
    const offset = this.offset;
    // A few bytes are stored as they are: deflating them costs more than it saves.
    const method = Buffer.isBuffer(source) && source.length <= TINY ? 0 : 8;
    // Sizes and CRC are 0 here: they follow the data, in the descriptor (flag bit 3).
    await this.write(
      Buffer.concat([
        u32(0x04034b50),
        u16(45),
        u16(UTF8_AND_DESCRIPTOR),
        u16(method),
        u16(0),
        u16(DOS_DATE),
        u32(0),
        u32(0),
        u32(0),
        u16(nameBytes.length),
        u16(0),
        nameBytes,
      ]),
    );
    const hash = createHash('sha256');
    const { crc, size, packed } = Buffer.isBuffer(source)
      ? await this.packed(source, hash)
      : await this.streamed(source, hash);
    const large = size >= MAX32 || packed >= MAX32;
    const sizes = large ? [u64(packed), u64(size)] : [u32(packed), u32(size)];
    await this.write(Buffer.concat([u32(0x08074b50), u32(crc), ...sizes]));
    this.entries.push({ name: nameBytes, method, crc, packed, size, offset });
    return { size, sha256: hash.digest('hex') };
  }

  /** A small entry in one call: a zlib stream per entry costs more than deflating it (job files are mostly small). */
  private async packed(data: Buffer, hash: Hash): Promise<{ crc: number; size: number; packed: number }> {
    hash.update(data);
    const out =
      data.length <= TINY
        ? data
        : data.length <= SMALL
          ? deflateRawSync(data, OPTIONS)
          : await deflateRawAsync(data, OPTIONS);
    await this.write(out);
    return { crc: crc32(data), size: data.length, packed: out.length };
  }

  // Neither stream has an encoding set, so each chunk read from them is a Buffer.
  private async streamed(
    source: AsyncIterable<Buffer>,
    hash: Hash,
  ): Promise<{ crc: number; size: number; packed: number }> {
    let crc = 0;
    let size = 0;
    let packed = 0;
    const deflate = createDeflateRaw(OPTIONS);
    const deflated: AsyncIterable<Buffer> = deflate;
    const pumped = (async () => {
      for await (const chunk of deflated) {
        packed += chunk.length;
        await this.write(chunk);
      }
    })();
    for await (const chunk of source) {
      hash.update(chunk);
      crc = crc32(chunk, crc);
      size += chunk.length;
      if (!deflate.write(chunk)) await once(deflate, 'drain');
    }
    deflate.end();
    await pumped;
    return { crc, size, packed };
  }

  /** Writes the central directory and closes the file. */
  async finish(): Promise<void> {
    const start = this.offset;
    for (const e of this.entries) await this.write(centralRecord(e));
    const length = this.offset - start;
    const count = this.entries.length;
    if (count >= 0xffff || start >= MAX32 || length >= MAX32) {
      const end64 = this.offset;
      await this.write(
        Buffer.concat([
          u32(0x06064b50),
          u64(44),
          u16(45),
          u16(45),
          u32(0),
          u32(0),
          u64(count),
          u64(count),
          u64(length),
          u64(start),
        ]),
      );
      await this.write(Buffer.concat([u32(0x07064b50), u32(0), u64(end64), u32(1)]));
    }
    const c16 = Math.min(count, 0xffff);
    await this.write(
      Buffer.concat([
        u32(0x06054b50),
        u16(0),
        u16(0),
        u16(c16),
        u16(c16),
        u32(Math.min(length, MAX32)),
        u32(Math.min(start, MAX32)),
        u16(0),
      ]),
    );
    this.out.end();
    await once(this.out, 'close');
  }

  /** Stops writing after a failure; the caller removes the file. */
  abort(): void {
    this.out.destroy();
  }
}

/** A central-directory record; values past 32 bits go to a zip64 extra field (in its fixed order). */
function centralRecord(e: Written): Buffer {
  const extra: Buffer[] = [];
  const field = (n: number) => {
    if (n < MAX32) return u32(n);
    extra.push(u64(n));
    return u32(MAX32);
  };
  const size = field(e.size);
  const packed = field(e.packed);
  const offset = field(e.offset);
  // The zip64 field lists uncompressed size, compressed size, offset: pushed in that order above.
  const extraBytes = extra.length > 0 ? Buffer.concat([u16(1), u16(extra.length * 8), ...extra]) : Buffer.alloc(0);
  return Buffer.concat([
    u32(0x02014b50),
    u16(MADE_BY_UNIX),
    u16(45),
    u16(UTF8_AND_DESCRIPTOR),
    u16(e.method),
    u16(0),
    u16(DOS_DATE),
    u32(e.crc),
    packed,
    size,
    u16(e.name.length),
    u16(extraBytes.length),
    u16(0),
    u16(0),
    u16(0),
    u32(REGULAR_0600),
    offset,
    e.name,
    extraBytes,
  ]);
}
