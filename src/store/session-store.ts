/**
 * The dashboard's sessions where every server node sees them (migration 0018, docs/architecture.md §10): one row per
 * session, found by the SHA-256 of its cookie value.
 */

export interface StoredSession {
  /** SHA-256 of the cookie value (base64). */
  tokenHash: string;
  user: string;
  createdAt: number;
  lastSeenAt: number;
  /** When it ends at the latest, whatever its use. */
  expiresAt: number;
}

export interface SessionStore {
  insert(session: StoredSession): Promise<void>;
  get(tokenHash: string): Promise<StoredSession | undefined>;
  /** Records a use at `at`. */
  touch(tokenHash: string, at: number): Promise<void>;
  /** Ends one session (sign-out). */
  delete(tokenHash: string): Promise<void>;
  /** Ends every session of a user (disabled, deleted, another password); answers how many ended. */
  deleteForUser(user: string): Promise<number>;
  /** Removes the sessions that have ended: past their expiry, or last seen at or before `idleSince`. */
  prune(now: number, idleSince: number): Promise<void>;
}
