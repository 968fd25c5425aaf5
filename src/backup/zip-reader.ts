import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { type Entry, open, type ZipFile } from 'yauzl';
import { nameProblem } from '../car/entry-names.ts';
import { MANIFEST_NAME, type Manifest } from './manifest.ts';

/**
 * Reads a backup archive (zip-writer.ts) with yauzl: its manifest first, then every file it lists, each checked as
 * it is inflated against the entry's CRC-32 and the manifest's size and SHA-256. A damaged archive is refused in
 * one line naming what does not match.
 */

const damaged = (why: string) => new Error(`the archive is damaged: ${why}`);

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) =>
    open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (err, zip) =>
      err ? reject(damaged(err.message)) : resolve(zip),
    ),
  );
}

function records(zip: ZipFile): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const found = new Map<string, Entry>();
    zip.on('error', (err: Error) => reject(damaged(err.message)));
    zip.on('entry', (entry: Entry) => {
      found.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(found));
    zip.readEntry();
  });
}

/** An entry's inflated bytes: yauzl's stream carries no encoding, so each chunk is a Buffer. */
function stream(zip: ZipFile, entry: Entry): Promise<AsyncIterable<Buffer>> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err ? reject(damaged(`${entry.fileName}: ${err.message}`)) : resolve(s))),
  );
}

/** One entry's bytes through `sink`, checked: a mismatch throws once the entry has been read. */
async function checked(
  zip: ZipFile,
  entry: Entry,
  expected: { size: number; sha256?: string },
  sink: (chunk: Buffer) => Promise<void> | void,
): Promise<void> {
  const hash = createHash('sha256');
  let crc = 0;
  let size = 0;
  try {
    for await (const chunk of await stream(zip, entry)) {
      hash.update(chunk);
      crc = crc32(chunk, crc);
      size += chunk.length;
      await sink(chunk);
    }
  } catch (err) {
    throw err instanceof Error && err.message.startsWith('the archive is damaged')
      ? err
      : damaged(`${entry.fileName}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (crc !== entry.crc32 || size !== expected.size || (expected.sha256 && hash.digest('hex') !== expected.sha256))
    throw damaged(`${entry.fileName} does not match its checksum`);
}

export interface OpenedBackup {
  manifest: Manifest;
  /** Writes every file the manifest lists under `folder`, checking each; throws at the first mismatch. */
  extract(folder: string): Promise<void>;
  close(): void;
}

/** Opens an archive and reads its manifest, which `check` turns into a Manifest or refuses. */
export async function openBackup(file: string, check: (text: string) => Manifest): Promise<OpenedBackup> {
  const zip = await openZip(file);
  try {
    const found = await records(zip);
    const head = found.get(MANIFEST_NAME);
    if (!head) throw damaged('it has no manifest (is it a Millrace backup?)');
    const parts: Buffer[] = [];
    await checked(zip, head, { size: head.uncompressedSize }, (c) => {
      parts.push(c);
    });
    const manifest = check(Buffer.concat(parts).toString('utf8'));
    const listed = manifest.files.map((f) => {
      const problem = nameProblem(f.name);
      if (problem) throw damaged(`entry ${JSON.stringify(f.name)} ${problem}`);
      const entry = found.get(f.name);
      if (!entry) throw damaged(`${f.name} is missing`);
      return { file: f, entry };
    });
    if (found.size !== manifest.files.length + 1) throw damaged('it holds entries its manifest does not list');
    return {
      manifest,
      async extract(folder) {
        for (const { file: f, entry } of listed) {
          const target = join(folder, f.name);
          await mkdir(dirname(target), { recursive: true });
          const out = createWriteStream(target, { mode: 0o600 });
          try {
            await checked(zip, entry, f, async (c) => {
              if (!out.write(c)) await once(out, 'drain');
            });
          } finally {
            out.end();
            await once(out, 'close');
          }
        }
      },
      close: () => zip.close(),
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}
