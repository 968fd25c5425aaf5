import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../agent/pidfile.ts';

/**
 * `<data>/server.pid`: the process of the server using a data folder, written at its start and removed when it
 * stops, so that the commands that must not run beside it (`millrace migrate`, `millrace restore --force`) can
 * refuse. A file left by a killed server names a dead process and counts for nothing.
 */
const fileOf = (dataDir: string) => join(dataDir, 'server.pid');

/** Records this process as the data folder's server; answers the function that removes the record again. */
export function markServer(dataDir: string): () => void {
  const file = fileOf(dataDir);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o644 });
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

/** The pid of a live server using the data folder, if any. */
export function runningServer(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(fileOf(dataDir), 'utf8').trim(), 10);
  } catch {
    return undefined;
  }
  return Number.isSafeInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
}
