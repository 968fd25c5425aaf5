import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { BlobInfo, BlobKind, BlobStore } from './blob-store.ts';
import type { Database } from './tables.ts';

const info = (r: { owner: string; name: string; size: number; sha256: string; created_at: number }): BlobInfo => ({
  owner: r.owner,
  name: r.name,
  size: Number(r.size),
  sha256: r.sha256,
  createdAt: Number(r.created_at),
});

export class KyselyBlobStore implements BlobStore {
  private readonly db: Kysely<Database>;
  private readonly onWrite: () => void;

  /** `onWrite` is told of every change: a library's files show in its (cached) rendering. */
  constructor(db: Kysely<Database>, onWrite: () => void) {
    this.db = db;
    this.onWrite = onWrite;
  }

  async put(kind: BlobKind, owner: string, name: string, data: Buffer, createdAt: number): Promise<BlobInfo> {
    const row = {
      kind,
      owner,
      name,
      data,
      size: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
      created_at: createdAt,
    };
    await this.db
      .insertInto('blobs')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['kind', 'owner', 'name'])
          .doUpdateSet({ data, size: row.size, sha256: row.sha256, created_at: createdAt }),
      )
      .execute();
    this.onWrite();
    return info(row);
  }

  async get(kind: BlobKind, owner: string, name: string): Promise<Buffer | undefined> {
    const r = await this.db
      .selectFrom('blobs')
      .select('data')
      .where('kind', '=', kind)
      .where('owner', '=', owner)
      .where('name', '=', name)
      .executeTakeFirst();
    return r ? Buffer.from(r.data) : undefined;
  }

  async list(kind: BlobKind, owner?: string): Promise<BlobInfo[]> {
    let q = this.db
      .selectFrom('blobs')
      .select(['owner', 'name', 'size', 'sha256', 'created_at'])
      .where('kind', '=', kind);
    if (owner !== undefined) q = q.where('owner', '=', owner);
    return (await q.orderBy('owner').orderBy('name').execute()).map(info);
  }

  async names(kind: BlobKind, owner?: string): Promise<Array<{ owner: string; name: string }>> {
    let q = this.db.selectFrom('blobs').select(['owner', 'name']).where('kind', '=', kind);
    if (owner !== undefined) q = q.where('owner', '=', owner);
    return q.orderBy('owner').orderBy('name').execute();
  }

  async delete(kind: BlobKind, owner: string, name?: string): Promise<void> {
    let q = this.db.deleteFrom('blobs').where('kind', '=', kind).where('owner', '=', owner);
    if (name !== undefined) q = q.where('name', '=', name);
    await q.execute();
    this.onWrite();
  }
}
