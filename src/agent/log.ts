/** The agent's log: one line per event on stderr (the agent loads no logging library, to stay small). */
export type Log = (message: string) => void;

export const stderrLog: Log = (message) => {
  process.stderr.write(`${new Date().toISOString()} millrace agent: ${message}\n`);
};

/** The message of anything thrown, for a log line. */
export function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
