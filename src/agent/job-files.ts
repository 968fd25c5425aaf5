import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FinishedFile } from './protocol.ts';
import type { WorkPaths } from './scripts.ts';

/** A job file the agent ships: its name for the server and where it is. */
export interface JobFile extends FinishedFile {
  path: string;
}

/** More files than this in `$MILLRACE_FILES` are not shipped (the report must fit in one protocol line). */
export const MAX_JOB_FILES = 1000;
const RESERVED = new Set(['stdout.log', 'stderr.log']);

/**
 * A name the server can store as a job file: valid UTF-8, 1–255 bytes, no `/`, not starting with `.`, no
 * control character, not one of the two log names.
 */
export function isSafeFileName(raw: Buffer): boolean {
  if (raw.length === 0 || raw.length > 255) return false;
  const name = raw.toString('utf8');
  if (!Buffer.from(name, 'utf8').equals(raw)) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  return !name.startsWith('.') && !name.includes('/') && !/[\u0000-\u001f\u007f]/.test(name) && !RESERVED.has(name);
}

/** stdout.log, stderr.log, then the regular files directly in `$MILLRACE_FILES` by name, with their sizes now. */
export function listJobFiles(paths: WorkPaths, log: (message: string) => void): JobFile[] {
  const files: JobFile[] = [
    { name: 'stdout.log', path: paths.stdout, size: sizeOf(paths.stdout) },
    { name: 'stderr.log', path: paths.stderr, size: sizeOf(paths.stderr) },
  ];
  let names: Buffer[];
  try {
    names = readdirSync(paths.files, { encoding: 'buffer' });
  } catch {
    return files;
  }
  const found: JobFile[] = [];
  for (const raw of names) {
    if (!isSafeFileName(raw)) continue;
    const name = raw.toString('utf8');
    const path = join(paths.files, name);
    try {
      const st = lstatSync(path);
      if (st.isFile()) found.push({ name, path, size: st.size });
    } catch {
      // gone since readdir
    }
  }
  found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (found.length > MAX_JOB_FILES) {
    log(`${paths.files} holds ${found.length} files; only the first ${MAX_JOB_FILES} by name are shipped`);
    found.length = MAX_JOB_FILES;
  }
  return files.concat(found);
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
