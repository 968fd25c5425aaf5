import { type Kysely, sql } from 'kysely';
import type { JobFileChunk, JobFileChunkStore } from './cluster-store.ts';
import type { Database } from './tables.ts';

/** The JobFileChunkStore of one Kysely database (migration 0010); the same SQL on SQLite and PostgreSQL. */
export class KyselyJobFileChunks implements JobFileChunkStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async put(jobId: number, name: string, chunk: JobFileChunk): Promise<void> {
    const row = {
      job_id: jobId,
      name,
      offset: chunk.offset,
      end_at: chunk.offset + chunk.data.length,
      data: chunk.data,
    };
    await this.db
      .insertInto('job_file_chunks')
      .values(row)
      .onConflict((c) => c.columns(['job_id', 'name', 'offset']).doUpdateSet({ end_at: row.end_at, data: row.data }))
      .execute();
  }

  async replace(jobId: number, name: string, data: Buffer): Promise<void> {
    // The new content replaces the chunk at 0 at once, then chunks after it go (a file the server rewrites, such
    // as an import's log, only grows, so a reader in between sees the old or the new text).
    await this.put(jobId, name, { offset: 0, data });
    await this.db
      .deleteFrom('job_file_chunks')
      .where('job_id', '=', jobId)
      .where('name', '=', name)
      .where('offset', '>', 0)
      .execute();
  }

  async size(jobId: number, name: string): Promise<number> {
    const row = await this.db
      .selectFrom('job_file_chunks')
      .select(sql<number | string | null>`max(end_at)`.as('size'))
      .where('job_id', '=', jobId)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(row?.size ?? 0);
  }

  async chunks(jobId: number, name: string, from: number, limit: number): Promise<JobFileChunk[]> {
    const rows = await this.db
      .selectFrom('job_file_chunks')
      .select(['offset', 'data'])
      .where('job_id', '=', jobId)
      .where('name', '=', name)
      .where('end_at', '>', from)
      .orderBy('offset')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ offset: Number(r.offset), data: Buffer.from(r.data) }));
  }

  async remove(jobIds: readonly number[]): Promise<void> {
    if (jobIds.length === 0) return;
    await this.db
      .deleteFrom('job_file_chunks')
      .where('job_id', 'in', [...jobIds])
      .execute();
  }
}
