import { appendFileSync, closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runHttp } from './http-job.ts';
import { maskText } from './mask.ts';
import type { RequestContext, RequestEnd, RequestRunner } from './request-context.ts';
import type { RunMessage } from './protocol.ts';
import type { WorkPaths } from './scripts.ts';

/**
 * HTTP and SQL jobs run inside the agent process (never in the server): no child process, so a kill aborts the
 * request or cancels the query instead of signalling a process group. They write the same files a script does
 * (stdout.log, stderr.log, job files in the files folder, Out values as `NAME=value` lines of the out file), so
 * the output shipping, the final report and the masking of the credential's password stay the same.
 */

/**
 * The SQL runner and its driver (pg, pg-cursor) are loaded by the first SQL job: every job the agent starts forks
 * it, and a fork costs by the agent's resident memory (bench/README.md, B2).
 */
const RUNNERS: Record<string, RequestRunner> = {
  HTTP: runHttp,
  SQL: async (ctx) => (await import('./sql-job.ts')).runSql(ctx),
};

/** Starts the request now; `onEnd` is called once it ended, was cancelled (a kill) or failed. */
export function startRequest(
  run: RunMessage,
  paths: WorkPaths,
  onEnd: (end: RequestEnd) => void,
): { kind: 'inProcess'; cancel: () => void; startTime: number } | { kind: 'failed'; error: string } {
  const runner = RUNNERS[run.scriptType];
  if (!runner) return { kind: 'failed', error: `the agent cannot run ${run.scriptType} jobs` };
  const mask = (run.mask ?? []).filter((v) => v.length > 0);
  try {
    mkdirSync(paths.files, { recursive: true });
    closeSync(openSync(paths.stdout, 'w', 0o644));
    closeSync(openSync(paths.stderr, 'w', 0o644));
  } catch (err) {
    return { kind: 'failed', error: `cannot start the job: ${err instanceof Error ? err.message : String(err)}` };
  }
  const outLines: string[] = [];
  const abort = new AbortController();
  const ctx: RequestContext = {
    run,
    paths,
    signal: abort.signal,
    mask,
    file: (name) => join(paths.files, name),
    error: (text) => appendFileSync(paths.stderr, `${maskText(text, mask)}\n`),
    out: (name, value) => outLines.push(`${name}=${maskText(value, mask).replace(/[\r\n]+/g, ' ')}`),
  };
  const startTime = Date.now();
  void (async () => {
    let returnCode: number;
    try {
      returnCode = await runner(ctx);
    } catch (err) {
      if (!abort.signal.aborted) ctx.error(err instanceof Error ? err.message : String(err));
      returnCode = 1;
    }
    try {
      if (outLines.length > 0) writeFileSync(paths.out, `${outLines.join('\n')}\n`, { mode: 0o600 });
    } catch (err) {
      ctx.error(`cannot write the Out values: ${err instanceof Error ? err.message : String(err)}`);
    }
    const killed = abort.signal.aborted;
    onEnd({ endTime: Date.now(), returnCode: killed ? null : returnCode, signal: killed ? 'SIGTERM' : null });
  })();
  return { kind: 'inProcess', cancel: () => abort.abort(), startTime };
}
