import type { RunMessage } from './protocol.ts';
import type { WorkPaths } from './scripts.ts';

/** The types HTTP and SQL runners share with request-job.ts (apart, so that neither imports the other). */

/** What an HTTP or SQL runner gets: the run, its files, the kill signal, and writers that mask the secret. */
export interface RequestContext {
  run: RunMessage;
  paths: WorkPaths;
  signal: AbortSignal;
  mask: string[];
  /** A job file (in the files folder) by name. */
  file(name: string): string;
  /** Appends a line to stderr.log, the secret masked. */
  error(text: string): void;
  /** Sets an Out value (one line of text, the secret masked). */
  out(name: string, value: string): void;
}

/** A runner's return code: 0 when it succeeded. */
export type RequestRunner = (ctx: RequestContext) => Promise<number>;

/** How an HTTP or SQL job ended, as runner.ts's ProcessEnd tells it (`signal` set when it was killed). */
export interface RequestEnd {
  endTime: number;
  returnCode: number | null;
  signal: string | null;
}
