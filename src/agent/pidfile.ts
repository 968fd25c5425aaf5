import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCode } from '../errors.ts';

/** Another live process holds the data folder's pid file. */
export class AgentLockedError extends Error {
  readonly pid: number;
  constructor(pid: number, dataDir: string) {
    super(`another agent (pid ${pid}) already uses ${dataDir}`);
    this.pid = pid;
  }
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === 'EPERM';
  }
}

/**
 * One agent per data folder: creates `<data>/agent.pid` holding our pid, replacing a stale one. Throws
 * AgentLockedError when it names another live process. Returns the function that removes it again.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'agent.pid');
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      break;
    } catch (err) {
      if (errorCode(err) !== 'EEXIST' || tries >= 3) throw err;
    }
    let pid = Number.NaN;
    try {
      pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    } catch {
      // vanished or unreadable: treat as stale
    }
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid))
      throw new AgentLockedError(pid, dataDir);
    rmSync(file, { force: true });
  }
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}
