import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import type { OidcSettings } from '../../src/config/oidc.ts';

/** The resource indicator Millrace's bearer tokens are issued for: JWT access tokens with this audience. */
export const RESOURCE = 'urn:millrace:test-api';
export const CLIENT_ID = 'millrace';
export const CLIENT_SECRET = 'test-client-secret-0123456789abcdef';

export interface TestIdentityProvider {
  /** The issuer URL, e.g. `http://127.0.0.1:41234`. */
  issuer: string;
  /** The settings a Millrace server needs to use this issuer (the secret written to a file in `dir`). */
  settings(dir: string, overrides?: Partial<OidcSettings>): Promise<OidcSettings>;
  /**
   * A JWT access token for `clientId` through the client-credentials grant (the client's groups as its claim), for
   * the resource RESOURCE unless another is named (its audience).
   */
  clientToken(clientId: string, resource?: string): Promise<{ token: string; expiresIn: number }>;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (oidc-provider) on a loopback port, for the single sign-on tests:
 * - the client `millrace` (authorization code with PKCE, client credentials), a native client: oidc-provider lets
 *   a native client's loopback redirect URI (`http://127.0.0.1/millrace/ui/oidc/callback`) match on any port, and
 *   the test's Millrace servers listen on ports picked at start;
 * - the provider's own development login page (any password) and consent page; an account's `groups` claim is
 *   `users[account]` (none for an account not listed), in the ID token and in access tokens;
 * - further clients `clients[id] = groups` for the client-credentials grant;
 * - JWT access tokens for the resource RESOURCE, signed with a key made for this provider.
 */
export async function startIdentityProvider(options: {
  users: Record<string, string[]>;
  clients?: Record<string, string[]>;
  accessTokenSeconds?: number;
}): Promise<TestIdentityProvider> {
  const http: Server = createServer();
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const issuer = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const groupsOf = (account: string | undefined, clientId: string | undefined): string[] | undefined =>
    account !== undefined ? options.users[account] : clientId !== undefined ? options.clients?.[clientId] : undefined;
  const ttl = options.accessTokenSeconds ?? 300;
  const extraClients = Object.keys(options.clients ?? {}).map((id) => ({
    client_id: id,
    client_secret: `${id}-secret-0123456789abcdef`,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_post',
  }));
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/millrace/ui/oidc/callback'],
        grant_types: ['authorization_code', 'client_credentials'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
      ...extraClients,
    ],
    jwks: { keys: [jwk] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, preferred_username: id, ...(options.users[id] ? { groups: options.users[id] } : {}) }),
    }),
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'] },
    // The groups go into the ID token itself, which is what Millrace reads at sign-in.
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: 'api',
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: ttl,
        }),
      },
    },
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string; clientId?: string }) => {
      const groups = groupsOf(token.accountId, token.accountId === undefined ? token.clientId : undefined);
      return groups ? { groups } : undefined;
    },
  });
  http.on('request', provider.callback());

  return {
    issuer,
    async settings(dir, overrides = {}) {
      const clientSecretFile = join(dir, 'oidc-client-secret');
      await writeFile(clientSecretFile, `${CLIENT_SECRET}\n`, { mode: 0o600 });
      return {
        issuer,
        clientId: CLIENT_ID,
        clientSecretFile,
        audience: RESOURCE,
        rolesClaim: 'groups',
        roleMap: new Map([
          ['millrace-admins', 'Administrator'],
          ['millrace-operators', 'Operator'],
          ['millrace-viewers', 'Viewer'],
        ]),
        userClaim: 'preferred_username',
        createUsers: true,
        only: false,
        ...overrides,
      };
    },
    async clientToken(clientId, resource = RESOURCE) {
      const secret = clientId === CLIENT_ID ? CLIENT_SECRET : `${clientId}-secret-0123456789abcdef`;
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: secret,
          resource,
          scope: 'api',
        }),
      });
      const body = (await res.json()) as { access_token?: string; expires_in?: number };
      if (!res.ok || !body.access_token) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
      return { token: body.access_token, expiresIn: body.expires_in ?? 0 };
    },
    async close() {
      http.closeAllConnections();
      http.close();
      await once(http, 'close');
    },
  };
}
