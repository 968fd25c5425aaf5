import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { unauthenticated } from '../errors.ts';
import type { Principal } from '../security/privileges.ts';
import type { SessionStore } from '../store/session-store.ts';
import type { Clock } from '../time/clock.ts';
import { Authenticator } from './auth.ts';

/** A signed-in dashboard user, as one request sees it. */
export interface Session {
  user: string;
  principal: Principal;
  /** Sent by the page in X-Millrace-CSRF on every state-changing request made with the cookie. */
  csrf: string;
  createdAt: number;
  lastSeenAt: number;
  /** Where the request that answered this came from. */
  clientAddress: string;
}

export const SESSION_CHALLENGE = 'Session realm="Millrace"';

interface CachedPrincipal {
  principal: Principal;
  checkedAt: number;
}

/**
 * Dashboard sessions (docs/architecture.md §10): a random id in an HttpOnly cookie; the database keeps a row per
 * session found by the id's SHA-256 (it never holds what the cookie holds), so every node serves every signed-in
 * user and a restart signs nobody out. Each request reads the row, so a sign-out on one node, or a user disabled,
 * deleted or given another password (AccountService removes the rows in the same transaction), ends the session
 * on every node at once. A session ends LIFETIME_MS after it began, or after IDLE_MS without a request; the last
 * use is written at most every TOUCH_MS, so a stream of requests costs one read each and a write a minute. The
 * user's roles are re-read every CACHE_MS.
 */
export class Sessions {
  static readonly LIFETIME_MS = 8 * 3600_000;
  static readonly IDLE_MS = 30 * 60_000;
  static readonly TOUCH_MS = 60_000;
  static readonly MAX_CACHED = 10_000;
  private readonly auth: Authenticator;
  private readonly store: SessionStore;
  private readonly clock: Clock;
  /** Principals by session digest, re-checked every Authenticator.CACHE_MS. */
  private readonly principals = new Map<string, CachedPrincipal>();
  private prunedAt: number | undefined;

  constructor(auth: Authenticator, store: SessionStore, clock: Clock) {
    this.auth = auth;
    this.store = store;
    this.clock = clock;
  }

  /** Checks the password like basic auth (same rate limit); answers the new session and its cookie value. */
  async signIn(user: string, password: string, clientAddress: string): Promise<{ id: string; session: Session }> {
    const { principal } = await this.auth.authenticatePassword({ user, password }, clientAddress, SESSION_CHALLENGE);
    return this.startFor(principal.user, clientAddress);
  }

  /** Writes a sign-in checked elsewhere (single sign-on), or its refusal, to the audit log. */
  recordSignIn(user: string, ok: boolean, clientAddress: string): Promise<void> {
    return this.auth.recordSignIn(user, ok, clientAddress);
  }

  /**
   * Starts a session for a user whose identity was established elsewhere (single sign-on): no password is
   * checked here. 401 when the user is missing or disabled.
   */
  async startFor(user: string, clientAddress: string): Promise<{ id: string; session: Session }> {
    const principal = await this.auth.principalOf(user);
    if (!principal) throw unauthenticated(SESSION_CHALLENGE);
    const now = this.clock.now();
    await this.prune(now);
    const id = randomBytes(32).toString('base64url');
    const tokenHash = digest(id);
    await this.store.insert({
      tokenHash,
      user: principal.user,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + Sessions.LIFETIME_MS,
    });
    this.remember(tokenHash, principal, now);
    return {
      id,
      session: { user: principal.user, principal, csrf: csrfOf(id), createdAt: now, lastSeenAt: now, clientAddress },
    };
  }

  /** The live session of a cookie value (and marks it used), or undefined. */
  async resolve(id: string | undefined, clientAddress = ''): Promise<Session | undefined> {
    if (!id || id.length > 100) return undefined;
    const tokenHash = digest(id);
    const stored = await this.store.get(tokenHash);
    if (!stored) {
      this.principals.delete(tokenHash);
      return undefined;
    }
    const now = this.clock.now();
    if (now >= stored.expiresAt || now - stored.lastSeenAt >= Sessions.IDLE_MS) {
      await this.end(tokenHash);
      return undefined;
    }
    let cached = this.principals.get(tokenHash);
    if (!cached || now - cached.checkedAt > Authenticator.CACHE_MS || now < cached.checkedAt) {
      const principal = await this.auth.principalOf(stored.user);
      if (!principal) {
        await this.end(tokenHash);
        return undefined;
      }
      cached = this.remember(tokenHash, principal, now);
    }
    let lastSeenAt = stored.lastSeenAt;
    if (now - lastSeenAt >= Sessions.TOUCH_MS) {
      await this.store.touch(tokenHash, now);
      lastSeenAt = now;
    }
    const { user, createdAt } = stored;
    return { user, principal: cached.principal, csrf: csrfOf(id), createdAt, lastSeenAt, clientAddress };
  }

  /** Ends the session of a cookie value, on every node. */
  async signOut(id: string | undefined): Promise<void> {
    if (id && id.length <= 100) await this.end(digest(id));
  }

  /** When the session ends at the latest (its absolute lifetime). */
  expiresAt(s: Session): number {
    return s.createdAt + Sessions.LIFETIME_MS;
  }

  /** The server's "now" (epoch ms): the dashboard plans its forecast from it, not from the workstation's clock. */
  now(): number {
    return this.clock.now();
  }

  private async end(tokenHash: string): Promise<void> {
    this.principals.delete(tokenHash);
    await this.store.delete(tokenHash);
  }

  private remember(tokenHash: string, principal: Principal, now: number): CachedPrincipal {
    if (this.principals.size >= Sessions.MAX_CACHED) this.principals.clear();
    const cached = { principal, checkedAt: now };
    this.principals.set(tokenHash, cached);
    return cached;
  }

  /** Removes ended sessions at most once a minute, by a node that starts one. */
  private async prune(now: number): Promise<void> {
    if (this.prunedAt !== undefined && now - this.prunedAt < 60_000 && now >= this.prunedAt) return;
    this.prunedAt = now;
    await this.store.prune(now, now - Sessions.IDLE_MS);
  }
}

const digest = (id: string): string => createHash('sha256').update(id).digest('base64');

/**
 * The CSRF token of a session, derived from its cookie value, so any node answers the same token without storing
 * it. A page of another site cannot read the HttpOnly cookie, so it cannot derive the token either.
 */
const csrfOf = (id: string): string => createHash('sha256').update(`csrf\0${id}`).digest('base64url');

/** Constant-time check of the CSRF token a request presents against the session's. */
export function csrfMatches(s: Session, presented: string | string[] | undefined): boolean {
  if (typeof presented !== 'string' || presented.length === 0 || presented.length > 100) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(s.csrf).digest();
  return timingSafeEqual(a, b);
}
