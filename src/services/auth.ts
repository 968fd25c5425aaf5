import { hash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { tooManyRequests, unauthenticated } from '../errors.ts';
import { hashApiKey, sameDigest } from '../security/api-keys.ts';
import { verifyPassword } from '../security/passwords.ts';
import type { Principal } from '../security/privileges.ts';
import type { ApiKey, Grant, Store } from '../store/store.ts';
import type { AuditInterface } from '../store/audit-store.ts';
import type { Clock } from '../time/clock.ts';
import { type Attempt, type FailureCounts, FailureLimiter, type Verdict } from './failure-limiter.ts';
import { MemoryFailureCounts } from './memory-failure-counts.ts';

export const API_KEY_CHALLENGE = 'APIKey header="X-API-Key"';
export const BASIC_CHALLENGE = 'Basic realm="Millrace", charset="UTF-8"';

/** A verified user and password: the hash it was checked against, so a password change invalidates it. */
interface CachedLogin {
  user: string;
  passwordHash: string;
  principal: Principal;
  verifiedAt: number;
  fetchedAt: number;
}

interface CachedKey {
  key: ApiKey;
  principal: Principal | null;
  fetchedAt: number;
}

/**
 * Turns a presented API key into a Principal. Keys, users and role grants are read through a cache that lives
 * CACHE_MS, so a revocation or a role change made by the CLI takes effect within that time without a database
 * read on every request. Last-used times are collected in memory and written in one batch.
 */
export class Authenticator {
  static readonly CACHE_MS = 2000;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly idleLapseMs: number;
  private readonly cache = new Map<string, CachedKey>();
  /** Reads of a key under way, shared by the requests presenting it meanwhile (`loadKey`). */
  private readonly keyLoads = new Map<string, Promise<CachedKey | undefined>>();
  /** Counts `forgetUser` calls: a read begun before one is not cached, and reads begun later are not shared with it. */
  private forgotten = 0;
  private readonly pendingUses = new Map<string, number>();
  /** Failed attempts per address and per user name (429 beyond authFailuresPerMinute; docs/architecture.md §10). */
  private readonly limiter: FailureLimiter;
  /** False under `--oidc-only`: users' passwords are refused (docs/architecture.md §10); API keys still work. */
  private readonly passwords: boolean;
  /**
   * Keyed by SHA-256 of a secret of this process and user:password, so the cache never holds a password. A one-shot
   * hash rather than an HMAC: createHmac builds a key object per request, a large share of an XML GET's
   * cost (bench/README.md); the key here only has to be unknown outside the process, nothing is verified against it.
   */
  private readonly logins = new Map<string, CachedLogin>();
  private readonly inFlight = new Map<string, Promise<CachedLogin | undefined>>();
  private readonly loginKey = randomBytes(32).toString('base64');
  /** A verified password is trusted this long without running scrypt again (scrypt is slow on purpose). */
  static readonly LOGIN_CACHE_MS = 60_000;

  /** `failureCounts`: where failures are counted; this process's memory unless given (one node). */
  constructor(
    store: Store,
    clock: Clock,
    options: { idleLapseMs: number; failuresPerMinute: number; failureCounts?: FailureCounts; passwords?: boolean },
  ) {
    this.store = store;
    this.clock = clock;
    this.passwords = options.passwords ?? true;
    this.idleLapseMs = options.idleLapseMs;
    this.limiter = new FailureLimiter(options.failureCounts ?? new MemoryFailureCounts(), options.failuresPerMinute);
  }

  /** Throws 401 (the same whatever was wrong) or 429 after too many wrong keys from one address. */
  async authenticateApiKey(presented: string | undefined, clientAddress: string): Promise<Principal> {
    const now = this.clock.now();
    await this.checkRateLimit({ address: clientAddress }, now);
    if (!presented || presented.length > 512) throw unauthenticated(API_KEY_CHALLENGE);
    // Cached by the presented key itself, so a hit costs no hashing; the database is only asked by hash.
    let entry = this.cache.get(presented);
    if (!entry || now - entry.fetchedAt > Authenticator.CACHE_MS) {
      entry = await this.loadKey(presented, now);
      if (!entry) {
        await this.limiter.fail({ address: clientAddress }, now);
        await this.audit('signin-failed', '', 'json', clientAddress, null);
        throw unauthenticated(API_KEY_CHALLENGE);
      }
    }
    const { key, principal } = entry;
    const recordedUse = this.pendingUses.get(key.id) ?? key.lastUsedTime;
    const lastUse = recordedUse ?? key.creationTime;
    const usable =
      principal !== null && key.revokedTime === null && now < key.expiryTime && now - lastUse < this.idleLapseMs;
    if (!usable) {
      await this.limiter.fail({ address: clientAddress }, now);
      await this.audit('signin-failed', key.userName, 'json', clientAddress, key.id);
      throw unauthenticated(API_KEY_CHALLENGE);
    }
    // Record a use at most once a minute per key: enough for "last used" and the idle lapse. The first use is
    // always recorded, also when it comes within a minute of the key's creation.
    if (recordedUse === null || now - recordedUse > 60_000) this.pendingUses.set(key.id, now);
    return { ...principal, via: { interface: 'json', address: clientAddress, apiKeyId: key.id } };
  }

  /**
   * Reads a presented key and its user's grants into the cache; undefined for an unknown key. The requests that
   * find the same key missing or stale meanwhile share this one read: a client with many requests in flight would
   * otherwise read the key, user and roles once per request at every expiry of the entry.
   */
  private loadKey(presented: string, now: number): Promise<CachedKey | undefined> {
    const shared = this.keyLoads.get(presented);
    if (shared !== undefined) return shared;
    const load: Promise<CachedKey | undefined> = this.readKey(presented, now, this.forgotten).finally(() => {
      if (this.keyLoads.get(presented) === load) this.keyLoads.delete(presented);
    });
    this.keyLoads.set(presented, load);
    return load;
  }

  private async readKey(presented: string, now: number, generation: number): Promise<CachedKey | undefined> {
    const hash = hashApiKey(presented);
    const key = await this.store.getApiKeyByHash(hash);
    // docs/architecture.md §10: the digest comparison is constant-time (the index look-up only found the candidate).
    if (!key || !sameDigest(hash, key.keyHash)) {
      this.cache.delete(presented);
      return undefined;
    }
    const entry = { key, principal: await this.principalOf(key.userName), fetchedAt: now };
    if (this.cache.size > 10_000) this.cache.clear();
    // A user forgotten meanwhile (forgetUser) may have been read before the change: answered, not kept.
    if (generation === this.forgotten) this.cache.set(presented, entry);
    return entry;
  }

  /**
   * Basic authentication (docs/architecture.md §10): `Authorization: Basic base64(user:password)`. Unknown users and wrong
   * passwords cost the same scrypt run and get the same 401; failures count per address (as API keys do) and per
   * user name (FailureLimiter: a limited name is refused only to addresses that failed themselves). A success is
   * cached for LOGIN_CACHE_MS, re-checked against the stored user every CACHE_MS so that a password change, a
   * disabled user or a role change takes effect at once.
   */
  async authenticateBasic(header: string | undefined, clientAddress: string): Promise<Principal> {
    return (await this.authenticatePassword(parseBasic(header), clientAddress, BASIC_CHALLENGE)).principal;
  }

  /**
   * A user name and password, as basic auth and the dashboard's sign-in present them: the same scrypt check,
   * cache and failure limits. Answers the principal and the password hash it was checked against
   * (a session remembers it, so a password change ends the session).
   */
  async authenticatePassword(
    credentials: { user: string; password: string } | undefined,
    clientAddress: string,
    challenge: string,
  ): Promise<{ principal: Principal; passwordHash: string }> {
    if (!this.passwords) throw unauthenticated(challenge);
    const now = this.clock.now();
    const attempt = { address: clientAddress, user: credentials?.user };
    const verdict = await this.checkRateLimit(attempt, now);
    const through: AuditInterface = challenge === BASIC_CHALLENGE ? 'xml' : 'console';
    if (
      !credentials ||
      credentials.user === '' ||
      credentials.user.length > 255 ||
      credentials.password.length > 1024
    ) {
      await this.limiter.fail(attempt, now);
      await this.audit('signin-failed', credentials?.user.slice(0, 255) ?? '', through, clientAddress, null);
      throw unauthenticated(challenge);
    }
    const { user, password } = credentials; // the length keeps "a\0b" + "c" apart from "a" + "b\0c"
    const cacheKey = hash('sha256', `${this.loginKey}\0${user.length}\0${user}\0${password}`, 'base64');
    let login = this.logins.get(cacheKey);
    if (login && (now - login.verifiedAt > Authenticator.LOGIN_CACHE_MS || !(await this.stillValid(login, now)))) {
      this.logins.delete(cacheKey);
      login = undefined;
    }
    if (!login) {
      // A password verified lately goes through at once; one to check waits first when its user name is limited.
      if (verdict.kind === 'delay') await sleep(verdict.ms);
      let pending = this.inFlight.get(cacheKey);
      if (!pending) {
        pending = this.verifyLogin(credentials.user, credentials.password, now).finally(() =>
          this.inFlight.delete(cacheKey),
        );
        this.inFlight.set(cacheKey, pending);
      }
      login = await pending;
      if (!login) {
        await this.limiter.fail(attempt, now);
        await this.audit('signin-failed', user, through, clientAddress, null);
        throw unauthenticated(challenge);
      }
      await this.audit('signin', login.user, through, clientAddress, null);
      if (this.logins.size > 10_000) this.logins.clear();
      this.logins.set(cacheKey, login);
    }
    return { principal: login.principal, passwordHash: login.passwordHash };
  }

  private async verifyLogin(userName: string, password: string, now: number): Promise<CachedLogin | undefined> {
    const user = await this.store.getUser(userName);
    // verifyPassword(…, null) runs scrypt on a dummy hash, so an unknown user takes as long as a wrong password.
    const ok = await verifyPassword(password, user?.passwordHash ?? null);
    if (!ok || !user || user.passwordHash === null || user.disabled) return undefined;
    const principal = await this.principalOf(user.name);
    if (!principal) return undefined;
    return { user: user.name, passwordHash: user.passwordHash, principal, verifiedAt: now, fetchedAt: now };
  }

  /** Re-reads the user (at most every CACHE_MS): same password hash, not disabled; refreshes the roles. */
  private async stillValid(login: CachedLogin, now: number): Promise<boolean> {
    if (now - login.fetchedAt <= Authenticator.CACHE_MS) return true;
    const user = await this.store.getUser(login.user);
    if (!user || user.disabled || user.passwordHash !== login.passwordHash) return false;
    const principal = await this.principalOf(user.name);
    if (!principal) return false;
    login.principal = principal;
    login.fetchedAt = now;
    return true;
  }

  /** The principal of a user, or null when the user is missing or disabled. */
  async principalOf(userName: string): Promise<Principal | null> {
    const user = await this.store.getUser(userName);
    if (!user || user.disabled) return null;
    const grants: Grant[] = [];
    for (const roleName of user.roles) {
      const role = await this.store.getRole(roleName);
      if (role) grants.push(...role.grants);
    }
    return { user: user.name, roles: user.roles, grants };
  }

  /** Throws 429 when an address has failed too often: bearer tokens are limited by address, as API keys are. */
  async checkAddress(clientAddress: string): Promise<void> {
    await this.checkRateLimit({ address: clientAddress }, this.clock.now());
  }

  /** Counts a failed bearer token against its address. */
  async failAddress(clientAddress: string): Promise<void> {
    await this.limiter.fail({ address: clientAddress }, this.clock.now());
    await this.audit('signin-failed', '', 'json', clientAddress, null);
  }

  /**
   * Drops what this node has cached of a user's keys and passwords, so a change made through this node (a key
   * revoked, the user disabled) holds at once here; other nodes re-read within CACHE_MS.
   */
  forgetUser(userName: string): void {
    this.forgotten++;
    this.keyLoads.clear();
    for (const [presented, entry] of this.cache) if (entry.key.userName === userName) this.cache.delete(presented);
    for (const [k, login] of this.logins) if (login.user === userName) this.logins.delete(k);
  }

  /** Writes the collected last-used times; called on a timer and at shutdown. */
  async flushUses(): Promise<void> {
    if (this.pendingUses.size === 0) return;
    const uses = [...this.pendingUses].map(([id, at]) => ({ id, at }));
    this.pendingUses.clear();
    await this.store.touchApiKeys(uses);
    for (const entry of this.cache.values()) {
      const use = uses.find((u) => u.id === entry.key.id);
      if (use) entry.key = { ...entry.key, lastUsedTime: use.at };
    }
  }

  /** A sign-in checked elsewhere (single sign-on through the dashboard), or its refusal, in the audit log. */
  recordSignIn(user: string, ok: boolean, address: string): Promise<void> {
    return this.audit(ok ? 'signin' : 'signin-failed', user, 'console', address, null);
  }

  /** A sign-in or a failed one, in the audit log (docs/architecture.md §18); the user as presented. */
  private audit(
    action: 'signin' | 'signin-failed',
    user: string,
    through: AuditInterface,
    address: string,
    apiKeyId: string | null,
  ): Promise<void> {
    return this.store.audit.add({
      time: this.clock.now(),
      actor: { user, interface: through, address, apiKeyId },
      action,
      object: null,
      detail: null,
      diff: null,
      restore: null,
    });
  }

  /** Throws 429 when the attempt is refused; answers the verdict otherwise (go ahead, or wait first). */
  private async checkRateLimit(attempt: Attempt, now: number): Promise<Exclude<Verdict, { kind: 'refuse' }>> {
    const verdict = await this.limiter.check(attempt, now);
    if (verdict.kind === 'refuse') throw tooManyRequests(verdict.retryAfterSeconds);
    return verdict;
  }
}

/** `Basic <base64(user:password)>` → its parts; undefined when malformed (no colon, empty user, oversized). */
export function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  if (!header || header.length > 2048) return undefined;
  const m = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
