import type { Database } from './tables.ts';

type ObjectRow = Database['objects'];

/**
 * PostgreSQL: object rows read by key, kept across transactions while the objects version (migration 0020) stays,
 * so the submits of a group read their definition and queue without a round trip (docs/architecture.md §2). A
 * transaction uses it only once it knows the version (read before its object reads, `Store.objectsVersion`, or with
 * a group's job ids) and only until it writes objects itself. A row it reads is kept under the version it knows:
 * read later than the version, it is as new or newer than that version says, never older. A transaction that
 * knows an older version than the one kept neither reads nor fills it. Bounded by rows and by the bytes of their
 * data (a definition's script may be large): past either it starts again.
 */
export class ObjectRowCache {
  static readonly MAX_ROWS = 10_000;
  static readonly MAX_BYTES = 16 * 1024 * 1024;
  private version = -1;
  private rows = new Map<string, ObjectRow | null>();
  private bytes = 0;

  /** The row kept for `id` (null: none such) at `version`; undefined when not kept. */
  get(version: number, id: string): ObjectRow | null | undefined {
    return version === this.version ? this.rows.get(id) : undefined;
  }

  /** Keeps a row read by a transaction knowing `version`. */
  set(version: number, id: string, row: ObjectRow | null): void {
    if (version < this.version) return;
    const size = row === null ? 0 : row.data.length;
    const full = this.rows.size >= ObjectRowCache.MAX_ROWS || this.bytes + size > ObjectRowCache.MAX_BYTES;
    if (version > this.version || full) {
      this.version = version;
      this.rows = new Map();
      this.bytes = 0;
    }
    this.rows.set(id, row);
    this.bytes += size;
  }
}
