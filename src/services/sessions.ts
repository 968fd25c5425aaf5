import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { unauthenticated } from '../errors.ts';
import type { Principal } from '../security/privileges.ts';
import type { Clock } from '../time/clock.ts';
import { Authenticator } from './auth.ts';

/** A signed-in dashboard user. Kept in this process's memory only: a server restart signs everybody out. */
export interface Session {
  user: string;
  principal: Principal;
  /** Sent by the page in X-Millrace-CSRF on every state-changing request made with the cookie. */
  csrf: string;
  createdAt: number;
  lastSeenAt: number;
  /**
   * The user's password hash at sign-in (null for a user without a password, signed in through the identity
   * provider): another password now ends the session.
   */
  passwordHash: string | null;
  checkedAt: number;
}

export const SESSION_CHALLENGE = 'Session realm="Millrace"';

/**
 * Dashboard sessions: a random id in an HttpOnly cookie, looked up here by its SHA-256 (so this map
 * never holds what the cookie holds). A session ends LIFETIME_MS after sign-in, after IDLE_MS without a request,
 * at sign-out, or when its user is disabled, deleted or given another password (checked every CACHE_MS, which
 * also picks up role changes).
 */
export class Sessions {
  static readonly LIFETIME_MS = 8 * 3600_000;
  static readonly IDLE_MS = 30 * 60_000;
  static readonly MAX_SESSIONS = 10_000;
  private readonly auth: Authenticator;
  private readonly clock: Clock;
  private readonly byDigest = new Map<string, Session>();

  constructor(auth: Authenticator, clock: Clock) {
    this.auth = auth;
    this.clock = clock;
  }

  /** Checks the password like basic auth (same rate limit); answers the new session and its cookie value. */
  async signIn(user: string, password: string, clientAddress: string): Promise<{ id: string; session: Session }> {
    const { principal, passwordHash } = await this.auth.authenticatePassword(
      { user, password },
      clientAddress,
      SESSION_CHALLENGE,
    );
    return this.open(principal, passwordHash);
  }

  /**
   * A session for a user signed in elsewhere (the identity provider, docs/architecture.md §10): the user's current
   * principal and password hash, as a password sign-in would have them. 401 when the user is gone or disabled.
   */
  async startFor(
    user: { name: string; passwordHash: string | null },
    _clientAddress: string,
  ): Promise<{ id: string; session: Session }> {
    const principal = await this.auth.principalWithPassword(user.name, user.passwordHash);
    if (!principal) throw unauthenticated(SESSION_CHALLENGE);
    return this.open(principal, user.passwordHash);
  }

  private open(principal: Principal, passwordHash: string | null): { id: string; session: Session } {
    const now = this.clock.now();
    this.sweep(now);
    const id = randomBytes(32).toString('base64url');
    const session: Session = {
      user: principal.user,
      principal,
      csrf: randomBytes(32).toString('base64url'),
      createdAt: now,
      lastSeenAt: now,
      passwordHash,
      checkedAt: now,
    };
    this.byDigest.set(digest(id), session);
    return { id, session };
  }

  /** The live session of a cookie value (and marks it used), or undefined. */
  async resolve(id: string | undefined): Promise<Session | undefined> {
    if (!id || id.length > 100) return undefined;
    const key = digest(id);
    const s = this.byDigest.get(key);
    if (!s) return undefined;
    const now = this.clock.now();
    if (now - s.createdAt >= Sessions.LIFETIME_MS || now - s.lastSeenAt >= Sessions.IDLE_MS) {
      this.byDigest.delete(key);
      return undefined;
    }
    if (now - s.checkedAt > Authenticator.CACHE_MS) {
      const principal = await this.auth.principalWithPassword(s.user, s.passwordHash);
      if (!principal) {
        this.byDigest.delete(key);
        return undefined;
      }
      s.principal = principal;
      s.checkedAt = now;
    }
    s.lastSeenAt = now;
    return s;
  }

  signOut(id: string | undefined): void {
    if (id) this.byDigest.delete(digest(id));
  }

  /** When the session ends at the latest (its absolute lifetime). */
  expiresAt(s: Session): number {
    return s.createdAt + Sessions.LIFETIME_MS;
  }

  /** The server's "now" (epoch ms): the dashboard plans its forecast from it, not from the workstation's clock. */
  now(): number {
    return this.clock.now();
  }

  private sweep(now: number): void {
    if (this.byDigest.size < Sessions.MAX_SESSIONS / 2) return;
    for (const [k, s] of this.byDigest)
      if (now - s.createdAt >= Sessions.LIFETIME_MS || now - s.lastSeenAt >= Sessions.IDLE_MS) this.byDigest.delete(k);
    // Still full: the oldest go (Map keeps insertion order).
    for (const k of this.byDigest.keys()) {
      if (this.byDigest.size < Sessions.MAX_SESSIONS) break;
      this.byDigest.delete(k);
    }
  }
}

const digest = (id: string): string => createHash('sha256').update(id).digest('base64');

/** Constant-time check of the CSRF token a request presents against the session's. */
export function csrfMatches(s: Session, presented: string | string[] | undefined): boolean {
  if (typeof presented !== 'string' || presented.length === 0 || presented.length > 100) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(s.csrf).digest();
  return timingSafeEqual(a, b);
}
