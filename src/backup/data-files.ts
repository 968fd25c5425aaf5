import { existsSync } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { nameProblem } from '../car/entry-names.ts';

/**
 * What of a data folder a backup holds besides the database (docs/architecture.md §17): the secret key (without it
 * no stored password opens), the webhook key, the local agent's secret, the trusted CAR keys, and the job files
 * when they are kept in a folder. Not: node-id, server.pid, the local agent's work and spool folders (what runs
 * now), the SQLite files themselves (the database is copied by sqlite-snapshot.ts).
 */

export interface DataFile {
  /** The entry's name in the archive (`/`-separated). */
  name: string;
  /** The content: read whole when small, else a stream (a job's output may be large). */
  open(): Promise<Buffer | Readable>;
}

const WHOLE = 1024 * 1024;

/** Opened before anything is written, so a file removed meanwhile (its job purged) fails here or not at all. */
const fileAt = (name: string, path: string): DataFile => ({
  name,
  async open() {
    const handle = await open(path, 'r');
    if ((await handle.stat()).size > WHOLE) return handle.createReadStream();
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  },
});

/** Every regular file under `root`, named `<prefix>/<relative path>`; symbolic links are not followed. */
async function* tree(root: string, prefix: string): AsyncGenerator<DataFile> {
  if (!existsSync(root)) return;
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    yield fileAt(`${prefix}/${relative(root, path).split(sep).join('/')}`, path);
  }
}

/** The files to back up, in a stable order; names an archive could not hold safely are counted in `skipped`. */
export async function* dataFiles(
  dataDir: string,
  jobFilesDir: string | undefined,
  skipped: { count: number },
): AsyncGenerator<DataFile> {
  for (const name of ['secret.key', 'webhook.key'])
    if (existsSync(join(dataDir, name))) yield fileAt(name, join(dataDir, name));
  const agents = join(dataDir, 'agents');
  if (existsSync(agents))
    for (const e of await readdir(agents, { withFileTypes: true }))
      if (e.isFile() && e.name.endsWith('.secret')) yield fileAt(`agents/${e.name}`, join(agents, e.name));
  yield* tree(join(dataDir, 'trusted-keys'), 'trusted-keys');
  if (jobFilesDir === 'database') return;
  for await (const f of tree(jobFilesDir ?? join(dataDir, 'jobfiles'), 'jobfiles')) {
    if (nameProblem(f.name)) skipped.count++;
    else yield f;
  }
}
