import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * A consistent copy of a live SQLite database, made with `VACUUM INTO` on a connection of its own in a worker
 * thread (docs/architecture.md §17). VACUUM INTO reads one snapshot in one read transaction: in WAL mode the server
 * writes on meanwhile (its commits go to the WAL; checkpoints stop short of the snapshot until it ends), and the
 * copy is never restarted as the page-stepping backup API is by every commit of another connection. In a worker,
 * the event loop of the process that asks (the server itself, for GLOBAL.System_Backup) is not held at all.
 */

// CommonJS evaluated in the worker; better-sqlite3 by its resolved path (see sqlite-checkpointer.ts).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
try {
  db.pragma('busy_timeout = 5000');
  db.prepare('vacuum into ?').run(workerData.target);
  const copy = new Database(workerData.target, { readonly: true });
  try {
    const has = copy.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
    const migrations = has ? copy.prepare('select name from kysely_migration order by name').pluck().all() : [];
    parentPort.postMessage({ migrations });
  } finally {
    copy.close();
  }
} finally {
  db.close();
}
`;

/** Copies the database `file` into `target` (which must not exist); answers the migrations the copy has run. */
export function snapshotSqlite(file: string, target: string): Promise<{ migrations: string[] }> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { driver, file, target } });
    let result: { migrations: string[] } | undefined;
    worker.once('message', (m: { migrations: string[] }) => {
      result = m;
    });
    worker.once('error', reject);
    worker.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`the database copy stopped (worker exit ${code})`)),
    );
  });
}
