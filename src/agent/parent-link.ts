import { Socket } from 'node:net';

/** What the agent writes on the link when its parent stops while jobs still run: do not wait for me. */
export const STAYING = 'staying\n';

/**
 * The pipe the server hands the local agent it starts (one of the agent's descriptors, `--parent-pipe`). Only the
 * server holds the other end: it ends it when it stops, and the kernel closes it when the server dies (SIGKILL
 * included), so the agent hears at once that its parent is gone, without polling. The agent answers `staying`
 * when jobs still run (it stays until they end and report to the next start), so a stopping server does not wait
 * for it; otherwise it exits, which the server waits for (docs/architecture.md §7).
 */
export class ParentLink {
  private readonly socket: Socket;
  private gone = false;

  constructor(fd: number, onGone: () => void) {
    // Half open: the parent's end having ended, the agent can still answer on its own.
    this.socket = new Socket({ fd, readable: true, writable: true, allowHalfOpen: true });
    const end = () => {
      if (this.gone) return;
      this.gone = true;
      onGone();
    };
    this.socket.on('end', end);
    this.socket.on('close', end);
    this.socket.on('error', end);
    this.socket.resume(); // the parent writes nothing; reading is what sees the end
    this.socket.unref(); // the link alone keeps the agent running no longer than its own work
  }

  /** Tells the parent the agent stays for its running jobs. */
  staying(): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    this.socket.end(STAYING);
  }

  close(): void {
    this.socket.destroy();
  }
}
