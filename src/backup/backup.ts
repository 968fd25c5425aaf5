import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { dataFiles } from './data-files.ts';
import { BACKUP_FORMAT, DATABASE_ENTRY, MANIFEST_NAME, type Manifest, type ManifestFile } from './manifest.ts';
import { snapshotSqlite } from './sqlite-snapshot.ts';
import { ZipWriter } from './zip-writer.ts';

export interface BackupOptions {
  dataDir: string;
  /** Set when the database is PostgreSQL: then only what lives outside it is archived (pg_dump takes the rest). */
  postgres?: boolean;
  /** `--job-files`: a folder, or `database`; default `<data>/jobfiles`. */
  jobFiles?: string;
  /** The archive to write; it appears whole or not at all. */
  to: string;
  version: string;
  now: Date;
}

export interface BackupSummary {
  file: string;
  bytes: number;
  files: number;
  skipped: number;
  database: 'sqlite' | 'postgres';
}

/**
 * Writes a backup archive of a data folder, online (docs/architecture.md §17): the database copied consistently
 * (sqlite-snapshot.ts), then the files, then the manifest with every entry's size and SHA-256. Written beside the
 * target and renamed into place, so a failed backup leaves no archive that looks whole.
 */
export async function createBackup(o: BackupOptions): Promise<BackupSummary> {
  const partial = `${o.to}.partial-${randomBytes(4).toString('hex')}`;
  const snapshot = `${partial}.sqlite`;
  const zip = new ZipWriter(partial);
  try {
    const files: ManifestFile[] = [];
    let migrations: string[] = [];
    if (!o.postgres) {
      const db = join(o.dataDir, DATABASE_ENTRY);
      if (!existsSync(db)) throw new Error(`there is no Millrace database in ${o.dataDir}`);
      ({ migrations } = await snapshotSqlite(db, snapshot));
      files.push({ name: DATABASE_ENTRY, ...(await zip.add(DATABASE_ENTRY, createReadStream(snapshot))) });
      await rm(snapshot, { force: true });
    }
    const skipped = { count: 0 };
    for await (const f of dataFiles(o.dataDir, o.jobFiles, skipped)) {
      try {
        files.push({ name: f.name, ...(await zip.add(f.name, await f.open())) });
      } catch (err) {
        // A job file removed meanwhile (its job purged) is left out; anything else stops the backup.
        if (!(err instanceof Error && 'code' in err && err.code === 'ENOENT')) throw err;
      }
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      millraceVersion: o.version,
      createdAt: o.now.toISOString(),
      database: o.postgres ? 'postgres' : 'sqlite',
      migrations,
      jobFiles: o.jobFiles === 'database' ? 'database' : 'folder',
      files,
    };
    await zip.add(MANIFEST_NAME, Buffer.from(JSON.stringify(manifest, null, 1)));
    await zip.finish();
    await rename(partial, o.to);
    return {
      file: o.to,
      bytes: (await stat(o.to)).size,
      files: files.length,
      skipped: skipped.count,
      database: manifest.database,
    };
  } catch (err) {
    zip.abort();
    await rm(partial, { force: true });
    await rm(snapshot, { force: true });
    throw err;
  }
}
