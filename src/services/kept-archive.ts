import { loopYielder } from '../loop-yield.ts';
import type { Store } from '../store/store.ts';

/**
 * A CAR archive kept in the database for its import job, in parts of 1 MiB. SQLite reads and writes a value whole
 * and synchronously: a large archive in one value held the event loop for the whole write and the whole
 * read (bench/README.md, B8); in parts, other requests are served between them. An archive kept whole by an older
 * version (one blob named `car`) reads the same way.
 */

const PART_BYTES = 1024 * 1024;

/** Keeps `bytes` for the import job `jobId`, inside the transaction that submits it. */
export async function keepArchive(tx: Store, jobId: number, bytes: Buffer, at: number): Promise<void> {
  const pause = loopYielder();
  const parts = Math.max(1, Math.ceil(bytes.length / PART_BYTES));
  for (let i = 0; i < parts; i++) {
    await pause();
    const part = bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES);
    await tx.blobs.put('archive', String(jobId), `car.${String(i).padStart(4, '0')}`, part, at);
  }
}

/** The archive kept for `jobId`, or undefined when there is none (imported or discarded before). */
export async function keptArchive(store: Store, jobId: number): Promise<Buffer | undefined> {
  const owner = String(jobId);
  const parts = await store.blobs.names('archive', owner);
  if (parts.length === 0) return undefined;
  const pause = loopYielder();
  const buffers: Buffer[] = [];
  for (const p of parts) {
    await pause();
    const part = await store.blobs.get('archive', owner, p.name);
    if (!part) return undefined; // discarded while being read
    buffers.push(part);
  }
  return Buffer.concat(buffers);
}
