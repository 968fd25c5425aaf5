import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import * as client from 'openid-client';
import { isLoopbackHost, type OidcSettings } from '../config/oidc.ts';

/**
 * The configured OpenID Connect issuer as openid-client and jose need it: its discovered metadata and client
 * configuration, and its signing keys (JWKS, fetched and refreshed by jose when a token names an unknown key).
 * Discovery happens at first use and is retried after a failure, so a server starts while its identity provider
 * is down and signs people in once it is back.
 */
export class OidcIssuer {
  private readonly settings: OidcSettings;
  private readonly secret: string;
  private discovered: Promise<client.Configuration> | undefined;
  private keys: JWTVerifyGetKey | undefined;

  constructor(settings: OidcSettings, secret: string) {
    this.settings = settings;
    this.secret = secret;
  }

  /** What the sign-in page names: the issuer's host (`Sign in with login.example.com`). */
  get label(): string {
    return new URL(this.settings.issuer).host;
  }

  configuration(): Promise<client.Configuration> {
    if (!this.discovered) {
      const url = new URL(this.settings.issuer);
      // docs/architecture.md §10: http only for an issuer on a loopback address (config/oidc.ts refuses others).
      const insecure = url.protocol === 'http:' && isLoopbackHost(url.hostname);
      this.discovered = client.discovery(
        url,
        this.settings.clientId,
        this.secret,
        undefined,
        insecure ? { execute: [client.allowInsecureRequests] } : {},
      );
      this.discovered.catch(() => {
        this.discovered = undefined;
      });
    }
    return this.discovered;
  }

  /** The issuer's identifier as its metadata spells it: the `iss` its tokens carry. */
  async identifier(): Promise<string> {
    return (await this.configuration()).serverMetadata().issuer;
  }

  /** The issuer's signing keys, from the `jwks_uri` its metadata names. */
  async jwks(): Promise<JWTVerifyGetKey> {
    if (!this.keys) {
      const uri = (await this.configuration()).serverMetadata().jwks_uri;
      if (!uri) throw new Error(`the issuer ${this.settings.issuer} publishes no jwks_uri`);
      this.keys = createRemoteJWKSet(new URL(uri));
    }
    return this.keys;
  }
}
