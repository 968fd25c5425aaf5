import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { migrations } from '../store/migrations/index.ts';
import { openStore } from '../store/open.ts';
import { checkManifest, type Manifest } from './manifest.ts';
import { runningServer } from './server-pid.ts';
import { openBackup } from './zip-reader.ts';

export interface RestoreOptions {
  from: string;
  dataDir: string;
  /** Replace what a non-empty data folder holds. */
  force: boolean;
  /** Put the job files in this folder instead of `<data>/jobfiles` (as the server's `--job-files` will say). */
  jobFiles?: string;
  version: string;
}

const isEmpty = async (dir: string) => !existsSync(dir) || (await readdir(dir)).length === 0;

/**
 * Restores a backup archive into a data folder (docs/architecture.md §17). Everything is checked before the folder
 * changes: the manifest's version first, then every entry as it is extracted into a folder beside the target;
 * only a whole, intact archive is moved into place. Then the database's migrations run as a start would run them.
 */
export async function restoreBackup(o: RestoreOptions): Promise<Manifest> {
  const dataDir = resolve(o.dataDir);
  const pid = runningServer(dataDir);
  if (pid !== undefined) throw new Error(`a server (pid ${pid}) is using ${dataDir}; stop it first`);
  if (!o.force && !(await isEmpty(dataDir)))
    throw new Error(`${dataDir} is not empty; restore into an empty folder, or give --force to replace what it holds`);
  if (o.jobFiles && !(await isEmpty(o.jobFiles))) throw new Error(`the job files folder ${o.jobFiles} is not empty`);
  const names = migrations.map((m) => m.name);
  const archive = await openBackup(o.from, (text) => checkManifest(text, o.version, names));
  const staging = join(dirname(dataDir), `.${basename(dataDir)}.restore-${randomBytes(4).toString('hex')}`);
  try {
    await archive.extract(staging);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  } finally {
    archive.close();
  }
  await mkdir(dataDir, { recursive: true });
  if (o.force) for (const e of await readdir(dataDir)) await rm(join(dataDir, e), { recursive: true, force: true });
  for (const e of await readdir(staging)) {
    const target = e === 'jobfiles' && o.jobFiles ? resolve(o.jobFiles) : join(dataDir, e);
    if (target !== join(dataDir, e)) await rm(target, { recursive: true, force: true });
    await mkdir(dirname(target), { recursive: true });
    await rename(join(staging, e), target);
  }
  await rm(staging, { recursive: true, force: true });
  if (archive.manifest.database === 'sqlite') await (await openStore({ dataDir })).close();
  return archive.manifest;
}
