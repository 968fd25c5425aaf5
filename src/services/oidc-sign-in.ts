import { hkdfSync } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';
import * as client from 'openid-client';
import type { OidcSettings } from '../config/oidc.ts';
import type { Store, User } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { AccountError, type AccountService } from './accounts.ts';
import { type Claims, rolesFrom, userNameFrom } from './oidc-claims.ts';
import type { OidcIssuer } from './oidc-issuer.ts';

/** Why a sign-in through the issuer was refused; the sign-in page words each (never a text from the request). */
export type SsoRefusal = 'unknown-user' | 'no-role' | 'disabled' | 'failed';

export class SsoRefused extends Error {
  readonly reason: SsoRefusal;
  constructor(reason: SsoRefusal, detail: string) {
    super(detail);
    this.reason = reason;
  }
}

/** A sign-in under way lives this long: the time a person has on the identity provider's pages. */
export const FLOW_SECONDS = 600;

/**
 * Sign-in through the OpenID Connect issuer (docs/architecture.md §10): the authorization-code flow with PKCE, state
 * and nonce. What the callback must check (the PKCE verifier, state, nonce, redirect URI) travels in a cookie
 * encrypted and authenticated with a key derived from the client secret (A256GCM, jose), so any node holding the
 * same secret can finish a sign-in another node began, and nothing is kept in memory.
 */
export class OidcSignIn {
  private readonly settings: OidcSettings;
  private readonly issuer: OidcIssuer;
  private readonly accounts: AccountService;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly flowKey: Uint8Array;

  constructor(deps: {
    settings: OidcSettings;
    issuer: OidcIssuer;
    secret: string;
    accounts: AccountService;
    store: Store;
    clock: Clock;
  }) {
    this.settings = deps.settings;
    this.issuer = deps.issuer;
    this.accounts = deps.accounts;
    this.store = deps.store;
    this.clock = deps.clock;
    this.flowKey = new Uint8Array(hkdfSync('sha256', deps.secret, 'millrace', 'oidc sign-in flow', 32));
  }

  get label(): string {
    return this.issuer.label;
  }

  /** Whether users' passwords are refused (`--oidc-only`). */
  get only(): boolean {
    return this.settings.only;
  }

  /** The redirect URI: the configured one, or the callback on the origin the browser used. */
  redirectUri(requestOrigin: string, uiPath: string): string {
    return this.settings.redirectUri ?? `${requestOrigin}${uiPath}/oidc/callback`;
  }

  /** The issuer's authorization URL to send the browser to, and the sealed flow for the cookie. */
  async begin(redirectUri: string): Promise<{ url: string; flow: string }> {
    const config = await this.issuer.configuration();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile email',
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const now = Math.floor(this.clock.now() / 1000);
    const flow = await new EncryptJWT({ v: verifier, s: state, n: nonce, r: redirectUri })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt(now)
      .setExpirationTime(now + FLOW_SECONDS)
      .encrypt(this.flowKey);
    return { url: url.href, flow };
  }

  /**
   * Finishes the flow at the callback: exchanges the code (checking state, nonce, PKCE and the ID token), then finds
   * or creates the user and gives it the roles the claim maps to. Throws SsoRefused.
   */
  async finish(query: URLSearchParams, sealedFlow: string | undefined): Promise<User> {
    const flow = await this.openFlow(sealedFlow);
    let claims: Claims | undefined;
    try {
      const config = await this.issuer.configuration();
      // The current URL is rebuilt on the redirect URI the flow began with, so a proxy's host does not matter.
      const current = new URL(flow.r);
      current.search = query.toString();
      const tokens = await client.authorizationCodeGrant(
        config,
        current,
        { pkceCodeVerifier: flow.v, expectedState: flow.s, expectedNonce: flow.n, idTokenExpected: true },
        { redirect_uri: flow.r },
      );
      claims = tokens.claims();
    } catch (err) {
      throw new SsoRefused('failed', `the issuer's answer was refused: ${err instanceof Error ? err.message : err}`);
    }
    if (!claims) throw new SsoRefused('failed', 'the issuer sent no ID token');
    return this.userFor(claims);
  }

  /** The user the claims name, created or given the mapped roles (the identity provider decides them). */
  private async userFor(claims: Claims): Promise<User> {
    const name = userNameFrom(claims, this.settings);
    if (!name) throw new SsoRefused('failed', 'the ID token names no user');
    const known = new Set((await this.store.listRoles()).map((r) => r.name));
    const roles = rolesFrom(claims, this.settings, known);
    const user = await this.store.getUser(name);
    if (user?.disabled) throw new SsoRefused('disabled', `user ${name} is disabled`);
    if (!user && !this.settings.createUsers) throw new SsoRefused('unknown-user', `no user ${name}`);
    if (roles.length === 0) throw new SsoRefused('no-role', `the ${this.settings.rolesClaim} claim maps to no role`);
    try {
      if (!user) return await this.accounts.addUser(name, { roles });
      if (sameRoles(user.roles, roles)) return user;
      return await this.accounts.setRoles(name, roles);
    } catch (err) {
      if (err instanceof AccountError) throw new SsoRefused('failed', err.message);
      throw err;
    }
  }

  private async openFlow(sealed: string | undefined): Promise<{ v: string; s: string; n: string; r: string }> {
    if (!sealed || sealed.length > 4096) throw new SsoRefused('failed', 'no sign-in under way in this browser');
    try {
      const { payload } = await jwtDecrypt(sealed, this.flowKey, { currentDate: new Date(this.clock.now()) });
      const { v, s, n, r } = payload;
      if (typeof v === 'string' && typeof s === 'string' && typeof n === 'string' && typeof r === 'string')
        return { v, s, n, r };
    } catch {
      // Expired, or not sealed by this secret: the same refusal below.
    }
    throw new SsoRefused('failed', 'the sign-in under way in this browser has expired or is not ours');
  }
}

const sameRoles = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().every((r, i) => r === b[i]);
