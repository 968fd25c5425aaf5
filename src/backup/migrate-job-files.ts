import { existsSync } from 'node:fs';
import { cp, open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { PgTarget } from './pg-target.ts';

/** Bytes per chunk row when job files move from a folder into the database. */
const CHUNK_BYTES = 1024 * 1024;

interface JobFilesOptions {
  from: string;
  jobFiles?: string;
  sourceJobFiles?: string;
  say: (line: string) => void;
}

/**
 * The job files of a migration (docs/architecture.md §17). Kept in the source database, they were copied with
 * its tables (`job_file_chunks`). Kept in a folder, they are copied into the folder `--job-files` names, or into
 * the database in chunks (`--job-files database`; a chunk there already is left, so a rerun resumes), or, without
 * `--job-files`, left where they are for the PostgreSQL servers to use.
 */
export async function copyJobFiles(
  source: BetterSqlite3.Database,
  target: PgTarget,
  o: JobFilesOptions,
): Promise<number> {
  const folder = resolve(o.sourceJobFiles ?? join(o.from, 'jobfiles'));
  if (!existsSync(folder)) return 0;
  if (o.jobFiles === undefined) {
    o.say(`job files: left in ${folder} (give the servers --job-files ${folder}, or run them with --data ${o.from})`);
    return 0;
  }
  if (o.jobFiles !== 'database') {
    if (resolve(o.jobFiles) === folder) return 0;
    await cp(folder, resolve(o.jobFiles), { recursive: true, force: true, preserveTimestamps: true });
    o.say(`job files: copied to ${resolve(o.jobFiles)}`);
    return 0;
  }
  return intoDatabase(source, target, folder, o.say);
}

/** Each job file of the folder as chunks in the database; answers how many chunks the files make. */
async function intoDatabase(
  source: BetterSqlite3.Database,
  target: PgTarget,
  folder: string,
  say: (line: string) => void,
): Promise<number> {
  const files = source
    .prepare<[], [number, string]>('select job_id, name from job_files order by job_id, name')
    .raw()
    .all();
  let moved = 0;
  let chunks = 0;
  for (const [jobId, name] of files) {
    const path = join(folder, String(jobId), name);
    if (!existsSync(path)) continue;
    const handle = await open(path, 'r');
    try {
      for (let offset = 0; ; offset += CHUNK_BYTES) {
        const buffer = Buffer.alloc(CHUNK_BYTES);
        const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, offset);
        if (bytesRead === 0) break;
        const data = buffer.subarray(0, bytesRead);
        chunks++;
        await target.insert(
          'job_file_chunks',
          ['job_id', 'name', 'offset', 'end_at', 'data'],
          [[jobId, name, offset, offset + bytesRead, data]],
        );
      }
    } finally {
      await handle.close();
    }
    if (++moved % 1000 === 0) say(`job files: ${moved} of ${files.length} into the database`);
  }
  say(`job files: ${moved} into the database`);
  return chunks;
}
