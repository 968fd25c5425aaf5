// The rules a CAR's entry names follow (docs/architecture.md §14): read from raw bytes, nothing that could escape
// a folder or mean different files on different systems, no two names one file; and the order they are written in.
import { Buffer } from 'node:buffer';
import { unprocessable } from '../errors.ts';
import { loopYielder } from '../loop-yield.ts';
import { UTF8_FLAG } from './zip-format.ts';

/** Longest entry name accepted, in bytes: object names are short, and a long name only serves an attack. */
export const MAX_NAME_BYTES = 1024;

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

export function checkName(name: string): void {
  const problem = nameProblem(name);
  if (problem) throw unprocessable(`unsafe entry name ${JSON.stringify(name)}: it ${problem}`);
}

/** Case-folded form: two names that fold alike would be one file on Windows and macOS file systems. */
const fold = (name: string): string => name.normalize('NFC').toUpperCase().toLowerCase();

/**
 * Names that are one file on some file system: the same name twice, names equal ignoring case, or a file that is
 * also another entry's folder (`a` and `a/b`), which no file system can hold.
 */
export async function checkCollisions(names: readonly string[]): Promise<void> {
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
export function decodeName(raw: Buffer, flags: number): string {
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
