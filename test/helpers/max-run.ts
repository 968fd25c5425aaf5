import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processRuns, until } from './processes.ts';

/**
 * A BASH script that runs for ten minutes in two processes, the shell and its `sleep` child, and writes both pids
 * (the shell's, then the child's) to `<dir>/pids-<jobId>`: a test of MaxRunTime checks from /proc that both go.
 */
export const overrunScript = (dir: string): string =>
  `sleep 600 &\nchild=$!\necho "$$ $child" > "${dir}/pids-$MILLRACE_JOB_ID.tmp"\n` +
  `mv "${dir}/pids-$MILLRACE_JOB_ID.tmp" "${dir}/pids-$MILLRACE_JOB_ID"\nwait\n`;

/** The pids a job of `overrunScript` wrote, once both run (the job is then Running, or about to be). */
export async function maxRunPids(dir: string, jobId: number): Promise<number[]> {
  let pids: number[] = [];
  await until(async () => {
    try {
      pids = (await readFile(join(dir, `pids-${jobId}`), 'utf8')).trim().split(' ').map(Number);
    } catch {
      return false;
    }
    return pids.length === 2;
  }, `the pids of Job:${jobId}`);
  for (const pid of pids) if (!processRuns(pid)) throw new Error(`process ${pid} of Job:${jobId} is not running`);
  return pids;
}
