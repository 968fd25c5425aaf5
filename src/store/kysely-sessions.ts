import type { Kysely } from 'kysely';
import type { SessionStore, StoredSession } from './session-store.ts';
import type { Database } from './tables.ts';

/** The SessionStore of one Kysely database or transaction; the same SQL on SQLite and PostgreSQL. */
export class KyselySessions implements SessionStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(s: StoredSession): Promise<void> {
    await this.db
      .insertInto('sessions')
      .values({
        token_hash: s.tokenHash,
        user_name: s.user,
        creation_time: s.createdAt,
        last_seen_time: s.lastSeenAt,
        expiry_time: s.expiresAt,
      })
      .execute();
  }

  async get(tokenHash: string): Promise<StoredSession | undefined> {
    const r = await this.db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    if (!r) return undefined;
    return {
      tokenHash: r.token_hash,
      user: r.user_name,
      createdAt: Number(r.creation_time),
      lastSeenAt: Number(r.last_seen_time),
      expiresAt: Number(r.expiry_time),
    };
  }

  async touch(tokenHash: string, at: number): Promise<void> {
    await this.db.updateTable('sessions').set({ last_seen_time: at }).where('token_hash', '=', tokenHash).execute();
  }

  async delete(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteForUser(user: string): Promise<number> {
    const r = await this.db.deleteFrom('sessions').where('user_name', '=', user).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async prune(now: number, idleSince: number): Promise<void> {
    await this.db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expiry_time', '<=', now), eb('last_seen_time', '<=', idleSince)]))
      .execute();
  }
}
