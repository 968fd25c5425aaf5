import { tooManyRequests, unauthenticated } from '../errors.ts';
import { hashApiKey, sameDigest } from '../security/api-keys.ts';
import type { Principal } from '../security/privileges.ts';
import type { ApiKey, Grant, Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';

export const API_KEY_CHALLENGE = 'APIKey header="X-API-Key"';

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
  private readonly failuresPerMinute: number;
  private readonly cache = new Map<string, CachedKey>();
  private readonly pendingUses = new Map<string, number>();
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(store: Store, clock: Clock, options: { idleLapseMs: number; failuresPerMinute: number }) {
    this.store = store;
    this.clock = clock;
    this.idleLapseMs = options.idleLapseMs;
    this.failuresPerMinute = options.failuresPerMinute;
  }

  /** Throws 401 (the same whatever was wrong) or 429 after too many wrong keys from one address. */
  async authenticateApiKey(presented: string | undefined, clientAddress: string): Promise<Principal> {
    const now = this.clock.now();
    this.checkRateLimit(clientAddress, now);
    if (!presented || presented.length > 512) throw unauthenticated(API_KEY_CHALLENGE);
    // Cached by the presented key itself, so a hit costs no hashing; the database is only asked by hash.
    let entry = this.cache.get(presented);
    if (!entry || now - entry.fetchedAt > Authenticator.CACHE_MS) {
      const hash = hashApiKey(presented);
      const key = await this.store.getApiKeyByHash(hash);
      // DESIGN §10: the digest comparison is constant-time (the index look-up only found the candidate).
      if (!key || !sameDigest(hash, key.keyHash)) {
        this.cache.delete(presented);
        this.recordFailure(clientAddress, now);
        throw unauthenticated(API_KEY_CHALLENGE);
      }
      entry = { key, principal: await this.principalOf(key.userName), fetchedAt: now };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(presented, entry);
    }
    const { key, principal } = entry;
    const recordedUse = this.pendingUses.get(key.id) ?? key.lastUsedTime;
    const lastUse = recordedUse ?? key.creationTime;
    const usable =
      principal !== null &&
      key.revokedTime === null &&
      now < key.expiryTime &&
      now - lastUse < this.idleLapseMs;
    if (!usable) {
      this.recordFailure(clientAddress, now);
      throw unauthenticated(API_KEY_CHALLENGE);
    }
    // Record a use at most once a minute per key: enough for "last used" and the idle lapse. The first use is
    // always recorded, also when it comes within a minute of the key's creation.
    if (recordedUse === null || now - recordedUse > 60_000) this.pendingUses.set(key.id, now);
    return principal;
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

  private checkRateLimit(address: string, now: number): void {
    const f = this.failures.get(address);
    if (f && now - f.windowStart < 60_000 && f.count >= this.failuresPerMinute)
      throw tooManyRequests(Math.ceil((f.windowStart + 60_000 - now) / 1000));
  }

  private recordFailure(address: string, now: number): void {
    const f = this.failures.get(address);
    if (!f || now - f.windowStart >= 60_000) {
      if (this.failures.size > 10_000) this.failures.clear();
      this.failures.set(address, { count: 1, windowStart: now });
    } else f.count += 1;
  }
}
