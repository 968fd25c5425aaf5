import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { TestServer } from './server.ts';

/** A place where the server keeps data, and what it holds. */
export interface StoredPlace {
  where: string;
  bytes: Buffer;
}

/**
 * Everything a server stored, raw: every file under its data folder (the SQLite database with its WAL, job files,
 * agent folders) and, on PostgreSQL, every row of every table as text. For tests that look for a value that must
 * never be stored in clear.
 */
export async function storedPlaces(t: TestServer): Promise<StoredPlace[]> {
  const places: StoredPlace[] = [];
  for (const entry of readdirSync(t.config.dataDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    try {
      places.push({ where: path, bytes: readFileSync(path) });
    } catch {
      // gone meanwhile (a temporary file)
    }
  }
  if (t.config.databaseUrl) {
    const client = new pg.Client({ connectionString: t.config.databaseUrl });
    await client.connect();
    try {
      const tables = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
      );
      for (const { table_name } of tables.rows) {
        const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
        places.push({ where: `table ${table_name}`, bytes: Buffer.from(rows.rows.map((r) => r.row).join('\n')) });
      }
    } finally {
      await client.end();
    }
  }
  return places;
}

/** The places holding `value` (as UTF-8 bytes). */
export async function placesHolding(t: TestServer, value: string): Promise<string[]> {
  const needle = Buffer.from(value, 'utf8');
  return (await storedPlaces(t)).filter((p) => p.bytes.includes(needle)).map((p) => p.where);
}
