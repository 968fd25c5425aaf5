/**
 * The agent protocol (docs/architecture.md §7), shared by both sides. Pure: message types and the NDJSON framing only.
 *
 * Transport: the agent opens an HTTP/1.1 connection to `<context>/agent` with
 *   `Connection: Upgrade`, `Upgrade: millrace-agent/1`,
 *   `X-Millrace-Process-Server: <partition>.<name>`, `Authorization: Bearer <process server secret>`,
 *   `X-Millrace-Agent-Instance: <random id chosen when the agent process starts>`.
 * The server answers `101 Switching Protocols` (or 401 / 404 / 409 with a one-line reason) and from then on both
 * sides write one JSON message per line (`\n`-terminated UTF-8).
 *
 * Guarantees:
 * - Dispatch is at most once per attempt: the server commits `Dispatched` with a new attempt number before it
 *   sends `run`. The agent writes its spool entry for (jobId, attempt) synchronously before it spawns, so an
 *   attempt missing from the agent's `hello.known` was never started and may be queued again.
 * - The final report is at least once: the agent keeps `finished` in its spool and re-sends it after every
 *   (re)connect until the server answers `ack`; the server ignores a report whose attempt is not the job's
 *   current one, or whose job is already final, and acknowledges it all the same.
 */

import type { FileWatch } from '../domain/file-watch.ts';

/** Definition types an agent runs; the script text comes from the job's snapshot of its definition. */
export type ScriptType = 'BASH' | 'SH' | 'PYTHON' | 'NODE';
/** Definition types the agent runs inside its own process (no script, no child process). */
export type RequestType = 'HTTP' | 'SQL';

// ─── server → agent ──────────────────────────────────────────────────────────────────────────────────

/** Sent once after the upgrade: tells the agent what to do with the attempts it reported in `hello`. */
export interface WelcomeMessage {
  type: 'welcome';
  /** Kill signal grace period: TERM, then KILL after this many milliseconds. */
  killGraceMs: number;
  /** Send `ping` at least this often. */
  heartbeatMs: number;
}

/** Start one attempt of a job. Parameters travel as environment variables and never as script text. */
export interface RunMessage {
  type: 'run';
  jobId: number;
  attempt: number;
  scriptType: ScriptType | RequestType;
  script: string;
  /** In and InOut parameters, by name, already formatted as text. */
  env: Record<string, string>;
  /** Names of Out and InOut parameters the agent collects after the script ends. */
  outNames: string[];
  /**
   * Secret values (a credential's password, also in `env`): every occurrence in stdout.log, stderr.log and the Out
   * values becomes `***`. The agent never writes them to its disk in clear (its spool keeps no `env`).
   */
  mask?: string[];
  /** HTTP and SQL: the definition's Http or Sql record, as it was at submit. */
  request?: Record<string, unknown>;
  /** HTTP and SQL: the credential's user, password and Protocol (its password is also in `mask`). */
  auth?: { user: string; password: string; protocol: string };
  /** HTTP: Out parameters filled from a JSON path of the response, by name. */
  jsonPaths?: Record<string, string>;
}

/** Kill the attempt's whole process group (TERM, then KILL after the grace period). */
export interface KillMessage {
  type: 'kill';
  jobId: number;
  attempt: number;
}

/** The job was set Unknown: stop tracking it, leave its process alone, drop its spool entry. */
export interface AbandonMessage {
  type: 'abandon';
  jobId: number;
  attempt: number;
}

/** The server has committed the `finished` (or `lost`) report of this attempt; the agent drops its spool entry. */
export interface AckMessage {
  type: 'ack';
  jobId: number;
  attempt: number;
}

export interface PongMessage {
  type: 'pong';
}

/**
 * The process server's AgentTimeout changed while the agent is connected: ping at least this often from now on
 * (and once at once, so that a shorter timeout never finds the agent silent).
 */
export interface HeartbeatMessage {
  type: 'heartbeat';
  heartbeatMs: number;
}

/**
 * The folders this agent watches for its process server (docs/architecture.md §7b), sent after `hello` and whenever
 * an event definition's `FileEvents` change: the whole list, replacing the one before.
 */
export interface WatchMessage {
  type: 'watch';
  watches: FileWatch[];
}

/** The server has committed the raise of this file (or refused it as a duplicate): the agent drops it. */
export interface RaisedMessage {
  type: 'raised';
  id: string;
}

export type ServerMessage =
  | WatchMessage
  | RaisedMessage
  | WelcomeMessage
  | RunMessage
  | KillMessage
  | AbandonMessage
  | AckMessage
  | PongMessage
  | HeartbeatMessage;

// ─── agent → server ──────────────────────────────────────────────────────────────────────────────────

/** An attempt the agent knows from its spool, in the `hello` sent right after the upgrade. */
export interface KnownAttempt {
  jobId: number;
  attempt: number;
  /** `running`: its process runs (or ran, and the result follows); `finished`: a report follows. */
  state: 'running' | 'finished';
  /** When its process started (epoch ms), so a `started` lost while disconnected is not needed. */
  startTime?: number;
  pid?: number;
}

export interface HelloMessage {
  type: 'hello';
  /** Free text for the log, e.g. `millrace-agent 0.3.0 on host pid 1234`. */
  agent: string;
  /** Job slots this agent offers (informative; the ProcessServer's ExecutionSize decides). */
  slots: number;
  known: KnownAttempt[];
}

/** The process of an attempt started. Times are epoch milliseconds of the agent's clock. */
export interface StartedMessage {
  type: 'started';
  jobId: number;
  attempt: number;
  pid: number;
  startTime: number;
}

/**
 * A piece of a job file. `offset` is where `data` (base64) goes in the file; writing it again at the same offset
 * is harmless, so chunks may be re-sent after a reconnect. Files are `stdout.log`, `stderr.log` and the plain
 * file names found in `$MILLRACE_FILES`.
 */
export interface OutputMessage {
  type: 'output';
  jobId: number;
  attempt: number;
  file: string;
  offset: number;
  data: string;
}

export interface FinishedFile {
  name: string;
  size: number;
}

/** The attempt's process ended; every `output` of it was sent before this message. */
export interface FinishedMessage {
  type: 'finished';
  jobId: number;
  attempt: number;
  startTime: number;
  endTime: number;
  /** Exit code, or null when a signal ended the process. */
  returnCode: number | null;
  signal: string | null;
  /** True when the agent killed it because of a `kill` message. */
  killed: boolean;
  /** Out and InOut values the script set, as text. */
  out: Record<string, string>;
  files: FinishedFile[];
  /** Why the agent could not start it (no interpreter, spawn failure); the job ends in Error with this note. */
  error?: string;
}

/** The agent restarted and found an attempt that was running when it stopped: its outcome is unknown. */
export interface LostMessage {
  type: 'lost';
  jobId: number;
  attempt: number;
}

export interface PingMessage {
  type: 'ping';
}

/** The agent is shutting down: send no more `run`; its running attempts are still reported. */
export interface DrainingMessage {
  type: 'draining';
}

/**
 * A watched file became stable (and was moved, when its watch says so): raise the event. Kept in the agent's spool
 * and sent again after every (re)connect until `raised`; the server raises one file identity
 * (definition, path, size, mtime, inode) once.
 */
export interface RaiseMessage {
  type: 'raise';
  /** The agent's key of this raise (the identity as text), echoed by `raised`. */
  id: string;
  definition: string;
  /** Full path of the file, after the move when there was one: the event's RaiserComment. */
  path: string;
  size: number;
  /** Modification time, epoch ms. */
  mtime: number;
  inode: string;
  /**
   * The file could not be moved into the watch's MoveDirectory (why): it stays at `path` and is not raised; the
   * server leaves an operator message instead, once for this identity.
   */
  moveError?: string;
}

/** How one watch is doing, as the agent last saw it. */
export interface WatchState {
  definition: string;
  directory: string;
  pattern: string;
  /** When the folder was last read (epoch ms), or null when it never was. */
  lastPoll: number | null;
  /** Files raised by this agent process for this watch. */
  filesSeen: number;
  lastError: string | null;
}

/** The state of every watch, sent when it changes (at most every few seconds, and at once for an error). */
export interface WatchStatusMessage {
  type: 'watchStatus';
  watches: WatchState[];
}

export type AgentMessage =
  | RaiseMessage
  | WatchStatusMessage
  | HelloMessage
  | StartedMessage
  | OutputMessage
  | FinishedMessage
  | LostMessage
  | PingMessage
  | DrainingMessage;

// ─── framing ─────────────────────────────────────────────────────────────────────────────────────────

export const UPGRADE_PROTOCOL = 'millrace-agent/1';
export const AGENT_PATH = '/agent';
export const HEADER_PROCESS_SERVER = 'x-millrace-process-server';
export const HEADER_AGENT_INSTANCE = 'x-millrace-agent-instance';

/** Longest line accepted; an `output` chunk is at most 64 KiB of data before base64. */
export const MAX_LINE_BYTES = 1024 * 1024;
export const OUTPUT_CHUNK_BYTES = 64 * 1024;

export function encode(message: ServerMessage | AgentMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Splits a byte stream into lines and parses each as JSON. A line longer than MAX_LINE_BYTES or one that is not
 * JSON calls `onError` (the caller closes the connection); partial lines wait for the next chunk.
 *
 * Lines are found in the bytes and each is decoded whole, once: an `output` line spans two socket reads, and
 * decoding every read and joining the text made three strings of it, which the server's young generation of heap
 * had to hold while output streamed in (docs/architecture.md §7). A UTF-8 sequence split between two reads is
 * whole again in its line.
 */
export class LineDecoder {
  /** The start of a line whose end has not arrived yet, in the pieces it came in. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly onMessage: (message: unknown) => void;
  private readonly onError: (reason: string) => void;

  constructor(onMessage: (message: unknown) => void, onError: (reason: string) => void) {
    this.onMessage = onMessage;
    this.onError = onError;
  }

  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    let newline = bytes.indexOf(0x0a);
    while (newline >= 0) {
      let line = bytes.subarray(start, newline);
      if (this.pending.length > 0) {
        line = Buffer.concat([...this.pending, line], this.pendingBytes + line.length);
        this.pending = [];
        this.pendingBytes = 0;
      }
      start = newline + 1;
      if (line.length > 0) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line.toString('utf8'));
        } catch {
          this.onError('a line is not JSON');
          return;
        }
        this.onMessage(parsed);
      }
      newline = bytes.indexOf(0x0a, start);
    }
    if (start < bytes.length) {
      this.pending.push(bytes.subarray(start));
      this.pendingBytes += bytes.length - start;
    }
    if (this.pendingBytes > MAX_LINE_BYTES) this.onError('a line is too long');
  }
}
