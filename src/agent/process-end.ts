/** How the process of an attempt ended (runner.ts forks it, spawner.ts starts it). */
export interface ProcessEnd {
  endTime: number;
  returnCode: number | null;
  signal: string | null;
  /** Set when the process could not be started. */
  error?: string;
}
