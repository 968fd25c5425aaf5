/**
 * Binary content kept in the database (migration 0006), so every node of a cluster sees it and it commits with
 * the objects that name it: library files (`library`, owner = the Library's key) and CAR archives waiting for
 * their import job (`archive`, owner = the job's staging id). Files are small (capped where they are accepted).
 */

export type BlobKind = 'library' | 'archive';

export interface BlobInfo {
  owner: string;
  name: string;
  size: number;
  /** Lower-case hex SHA-256 of the content. */
  sha256: string;
  createdAt: number;
}

export interface BlobStore {
  /** Writes (or replaces) one blob. */
  put(kind: BlobKind, owner: string, name: string, data: Buffer, createdAt: number): Promise<BlobInfo>;
  get(kind: BlobKind, owner: string, name: string): Promise<Buffer | undefined>;
  /** Blobs of a kind, of one owner when given, ordered by owner and name. */
  list(kind: BlobKind, owner?: string): Promise<BlobInfo[]>;
  /**
   * Owners and names only, in the same order: read from the primary key's index alone. SQLite keeps `size`, `sha256`
   * and `created_at` after `data`, so `list` walks each blob's overflow pages to reach them (slow for a large
   * archive: bench/README.md).
   */
  names(kind: BlobKind, owner?: string): Promise<Array<{ owner: string; name: string }>>;
  /** Removes one blob, or all of an owner when no name is given. */
  delete(kind: BlobKind, owner: string, name?: string): Promise<void>;
}
