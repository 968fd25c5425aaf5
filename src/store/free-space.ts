import { statfsSync } from 'node:fs';

/**
 * Below this many bytes free for the server's user, a file system counts as full: an I/O error of SQLite's then
 * means a full disk (better-sqlite3 does not tell the errno), and a full disk is not seen as freed again until the
 * file system has this much room (docs/architecture.md §9).
 */
export const LOW_SPACE_BYTES = 1024 * 1024;

/** Bytes free for unprivileged writes on the file system holding `path`; undefined when it cannot be asked. */
export function freeBytes(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** True when the file system holding `path` has less than LOW_SPACE_BYTES free. */
export const lowOnSpace = (path: string): boolean => (freeBytes(path) ?? Number.POSITIVE_INFINITY) < LOW_SPACE_BYTES;
