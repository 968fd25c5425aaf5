import { jwtVerify } from 'jose';
import type { OidcSettings } from '../config/oidc.ts';
import { unauthenticated } from '../errors.ts';
import type { Principal } from '../security/privileges.ts';
import type { Grant, Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { Authenticator } from './auth.ts';
import { rolesFrom, userNameFrom } from './oidc-claims.ts';
import type { OidcIssuer } from './oidc-issuer.ts';

export const BEARER_CHALLENGE = 'Bearer realm="Millrace"';

interface CachedToken {
  principal: Principal;
  expiresAt: number;
  fetchedAt: number;
}

/**
 * `Authorization: Bearer <access token>` on the JSON interface (docs/architecture.md §10): a JWT of the configured
 * issuer, verified with jose against the issuer's published keys (signature, issuer, audience, expiry on the
 * server's clock). Its roles claim gives the roles, as at a dashboard sign-in; a user of that name that is disabled,
 * or that does not exist while users are not created, is refused. Failures count per client address, as wrong API
 * keys do. A verified token is remembered for Authenticator.CACHE_MS, never past its expiry.
 */
export class OidcBearer {
  private readonly settings: OidcSettings;
  private readonly issuer: OidcIssuer;
  private readonly store: Store;
  private readonly auth: Authenticator;
  private readonly clock: Clock;
  private readonly cache = new Map<string, CachedToken>();

  constructor(deps: { settings: OidcSettings; issuer: OidcIssuer; store: Store; auth: Authenticator; clock: Clock }) {
    this.settings = deps.settings;
    this.issuer = deps.issuer;
    this.store = deps.store;
    this.auth = deps.auth;
    this.clock = deps.clock;
  }

  /** The principal of a presented token; 401 (the same whatever was wrong) or 429 after too many from one address. */
  async authenticate(token: string, clientAddress: string): Promise<Principal> {
    const now = this.clock.now();
    await this.auth.checkAddress(clientAddress);
    const hit = this.cache.get(token);
    if (hit && now - hit.fetchedAt <= Authenticator.CACHE_MS && now < hit.expiresAt)
      return withVia(hit.principal, clientAddress);
    this.cache.delete(token);
    const verified = token.length <= 8192 ? await this.verify(token, now) : undefined;
    if (!verified) {
      await this.auth.failAddress(clientAddress);
      throw unauthenticated(BEARER_CHALLENGE);
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(token, { ...verified, fetchedAt: now });
    return withVia(verified.principal, clientAddress);
  }

  private async verify(token: string, now: number): Promise<{ principal: Principal; expiresAt: number } | undefined> {
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(token, await this.issuer.jwks(), {
        issuer: await this.issuer.identifier(),
        audience: this.settings.audience,
        requiredClaims: ['exp'],
        currentDate: new Date(now),
      }));
    } catch {
      return undefined;
    }
    const name = userNameFrom(claims, this.settings);
    if (!name) return undefined;
    const user = await this.store.getUser(name);
    if (user?.disabled || (!user && !this.settings.createUsers)) return undefined;
    const roles = rolesFrom(claims, this.settings, new Set((await this.store.listRoles()).map((r) => r.name)));
    const grants: Grant[] = [];
    for (const roleName of roles) {
      const role = await this.store.getRole(roleName);
      if (role) grants.push(...role.grants);
    }
    return { principal: { user: name, roles, grants }, expiresAt: Number(claims.exp) * 1000 };
  }
}

/** What the audit log names the token's actions by (docs/architecture.md §18): the JSON interface and the client. */
const withVia = (principal: Principal, clientAddress: string): Principal => ({
  ...principal,
  via: { interface: 'json', address: clientAddress, apiKeyId: null },
});
