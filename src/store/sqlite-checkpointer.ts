/**
 * WAL checkpoints off the event loop. SQLite copies the WAL back into the database file in the commit that takes the
 * WAL past `wal_autocheckpoint` pages, synchronously: after a large import, most of the commit's time
 * (bench/README.md, B8), with every request waiting. The writer's automatic checkpoints are off; instead, after a
 * commit, the WAL's size is looked at (at most every 100 ms) and, past 4 MiB, a worker thread with its own
 * connection runs a PASSIVE checkpoint, which neither waits for nor blocks the writer and the readers.
 *
 * `journal_size_limit` (set on the writer to the same 4 MiB) truncates the WAL when the writer starts it afresh
 * after a complete checkpoint, so a size past the limit means frames written since. A checkpoint that could not copy
 * everything (commits came meanwhile) leaves the WAL large, and the next look runs another.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** SQLite's own default: 1,000 pages of 4 KiB. */
export const WAL_LIMIT_BYTES = 4 * 1024 * 1024;
const LOOK_EVERY_MS = 100;

// CommonJS evaluated in the worker: better-sqlite3 is required by its resolved path, so that neither the worker's
// working folder nor a TypeScript loader matters.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage('done');
  } catch (err) {
    parentPort.postMessage(String(err instanceof Error ? err.message : err));
  }
});
`;

export class Checkpointer {
  private readonly file: string;
  private readonly wal: string;
  private worker: Worker | undefined;
  private running = false;
  private lookedAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  private readonly fallback: () => void;

  /** `fallback`: gives the writer its automatic checkpoints back, should the worker fail. */
  constructor(file: string, fallback: () => void) {
    this.file = file;
    this.wal = `${file}-wal`;
    this.fallback = fallback;
  }

  /** Told after every commit of the writer: starts a checkpoint when the WAL has grown past the limit. */
  committed(): void {
    if (this.running || this.closed) return;
    const now = performance.now();
    if (now - this.lookedAt < LOOK_EVERY_MS) return;
    this.lookedAt = now;
    let size: number;
    try {
      size = statSync(this.wal).size;
    } catch {
      return; // no WAL file (yet)
    }
    if (size <= WAL_LIMIT_BYTES) return;
    this.running = true;
    this.start().postMessage('checkpoint');
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER, { eval: true, workerData: { driver, file: this.file } });
    // 'done', or the error of a checkpoint that failed (a full disk, say): the next look tries again.
    worker.on('message', () => {
      this.running = false;
    });
    // A worker that failed (it could not open the file, say): the writer checkpoints again, as SQLite does.
    worker.on('error', () => {
      this.worker = undefined;
      this.closed = true;
      this.fallback();
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** Ends the worker (after the checkpoint it runs, if any). */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    await exited;
  }
}
