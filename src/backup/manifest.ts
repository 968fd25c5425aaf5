/**
 * What a backup archive says of itself (docs/architecture.md §17): the first entry, `manifest.json`. Pure: the
 * checks a restore makes before it writes anything.
 */

/** The archive layout this version writes; a restore refuses a higher one. */
export const BACKUP_FORMAT = 1;
export const MANIFEST_NAME = 'manifest.json';
/** The entry holding the SQLite database (absent when the database is PostgreSQL, left to pg_dump). */
export const DATABASE_ENTRY = 'millrace.sqlite';

export interface ManifestFile {
  name: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: number;
  millraceVersion: string;
  createdAt: string;
  /** `sqlite` (the database is in the archive) or `postgres` (it is not: pg_dump). */
  database: 'sqlite' | 'postgres';
  /** The schema migrations the database in the archive has run, in order. */
  migrations: string[];
  /** Where the job files were: `folder` (entries under jobfiles/) or `database`. */
  jobFiles: 'folder' | 'database';
  files: ManifestFile[];
}

/** Compares dotted versions (`0.10.2` > `0.9.9`); a pre-release suffix is ignored. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split(/[-+]/)[0]
      ?.split('.')
      .map((p) => Number.parseInt(p, 10) || 0) ?? [];
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * Reads and checks the manifest's text against what this version can restore; throws one line saying why not.
 * `known`: the migrations this version has, in order.
 */
export function checkManifest(text: string, version: string, known: readonly string[]): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(text);
  } catch {
    throw new Error('the archive is damaged: its manifest is not readable');
  }
  if (typeof m !== 'object' || m === null || !Number.isInteger(m.format) || !Array.isArray(m.files))
    throw new Error('the archive is damaged: its manifest is not a Millrace backup manifest');
  if (m.format > BACKUP_FORMAT)
    throw new Error(
      `the archive has backup format ${m.format}; this Millrace ${version} reads format ${BACKUP_FORMAT}`,
    );
  if (typeof m.millraceVersion !== 'string' || compareVersions(m.millraceVersion, version) > 0)
    throw new Error(
      `the archive was made by Millrace ${String(m.millraceVersion)}, newer than this ${version}: restore it with that version or later`,
    );
  const unknown = (Array.isArray(m.migrations) ? m.migrations : []).filter((n) => !known.includes(n));
  if (unknown.length > 0)
    throw new Error(
      `the archive's database has migrations this Millrace ${version} does not know: ${unknown.join(', ')}`,
    );
  if (m.database === 'sqlite' && !m.files.some((f) => f.name === DATABASE_ENTRY))
    throw new Error('the archive is damaged: it lists no database');
  return m;
}
