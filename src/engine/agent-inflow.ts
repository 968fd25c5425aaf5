import type { Duplex } from 'node:stream';

/** Job output read from one agent and not yet stored, above which the server stops reading that agent. */
export const INFLOW_PAUSE_BYTES = 256 * 1024;
/** …and at or below which it reads again (a few chunks still queued, so storing never waits for the network). */
export const INFLOW_RESUME_BYTES = 64 * 1024;
/** While paused, a `pong` this often tells the agent the server is there (it drops a silent server). */
const KEEPALIVE_MS = 1000;

/**
 * Backpressure from the job-file storage to an agent's socket (docs/architecture.md §7). The server holds the job
 * output it has read from an agent until it is stored; past INFLOW_PAUSE_BYTES it stops reading the socket, so the
 * kernel's buffers fill, the agent's writes wait for 'drain' and the agent reads the job's file no further: what the
 * server holds for an agent stays bounded however fast its jobs write and however slow storage is. Reading resumes
 * once the held bytes are down to INFLOW_RESUME_BYTES.
 *
 * The agent's other messages (`ping`, `finished`) wait behind its output meanwhile, so while paused the silence is
 * the server's, not the agent's: `paused` tells the hub to count the agent as heard from, and a `pong` goes to the
 * agent every second so that it does not take the server for gone either.
 */
export class Inflow {
  private held = 0;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly socket: Duplex;
  private readonly on: { pong(): void; resumed(): void };

  /** `on.pong` writes a `pong`; `on.resumed` hears that the socket is read again (the agent counts as heard from). */
  constructor(socket: Duplex, on: { pong(): void; resumed(): void }) {
    this.socket = socket;
    this.on = on;
    socket.once('close', () => this.stopKeepAlive());
  }

  get paused(): boolean {
    return this.keepAlive !== undefined;
  }

  /** `bytes` of output were read and wait to be stored. */
  hold(bytes: number): void {
    this.held += bytes;
    if (this.held <= INFLOW_PAUSE_BYTES || this.paused || this.socket.destroyed) return;
    this.socket.pause();
    this.keepAlive = setInterval(() => {
      if (!this.socket.destroyed) this.on.pong();
    }, KEEPALIVE_MS);
    this.keepAlive.unref();
  }

  /** `bytes` held earlier are stored (or given up). */
  release(bytes: number): void {
    this.held -= bytes;
    if (!this.paused || this.held > INFLOW_RESUME_BYTES) return;
    this.stopKeepAlive();
    if (this.socket.destroyed) return;
    this.on.resumed();
    this.socket.resume();
  }

  private stopKeepAlive(): void {
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }
}
