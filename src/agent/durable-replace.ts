import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Replaces the file at `path` by `text` so that a crash leaves either the old or the new content: written and
 * synced aside, put in place by a rename, and the folder synced so the rename itself survives
 * (docs/architecture.md §7). The agent's journals (the attempts' spool and the file raises) compact this way.
 */
export function replaceDurably(path: string, text: string): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  syncFolder(dirname(path));
}

function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } catch {
    // some file systems cannot sync a folder; the rename is then as durable as they make it
  } finally {
    closeSync(fd);
  }
}
