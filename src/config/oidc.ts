import { resolve } from 'node:path';

/** Single sign-on through an OpenID Connect issuer (docs/architecture.md §10). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  /** Read when the server starts; the secret never sits in the configuration itself. */
  clientSecretFile: string;
  /** Bearer access tokens must name it in `aud`: the client id unless set. */
  audience: string;
  /** Dotted path of the claim whose values give roles (`groups`, `realm_access.roles`). */
  rolesClaim: string;
  /** claim value → Millrace role; empty: a value naming a role is that role. */
  roleMap: ReadonlyMap<string, string>;
  /** The claim holding the user name (`sub` when the token has none). */
  userClaim: string;
  /** Create a user at its first sign-in; otherwise unknown users are refused. */
  createUsers: boolean;
  /** Refuse users' passwords (dashboard and basic auth); API keys keep working. */
  only: boolean;
  /** The callback URL registered at the issuer; by default derived from the sign-in request. */
  redirectUri?: string;
}

/** The option values of `oidc-*` as text, by key (`oidc-issuer` …), and whether a switch is on. */
export interface OidcOptionValues {
  text: (key: string) => string | undefined;
  switchOn: (key: string, dflt: boolean) => boolean;
}

/**
 * The single sign-on settings, or none when no issuer is configured. An issuer without client id or secret file is
 * refused, and so is `--oidc-only` without an issuer (nobody could sign in).
 */
export function oidcSettings(v: OidcOptionValues): { oidc?: OidcSettings } {
  const issuer = v.text('oidc-issuer');
  const only = v.switchOn('oidc-only', false);
  if (!issuer) {
    if (only) throw new Error('--oidc-only needs --oidc-issuer');
    return {};
  }
  checkIssuer(issuer);
  const clientId = v.text('oidc-client-id');
  const secretFile = v.text('oidc-client-secret-file');
  if (!clientId || !secretFile) throw new Error('--oidc-issuer needs --oidc-client-id and --oidc-client-secret-file');
  const redirectUri = v.text('oidc-redirect-uri');
  if (redirectUri !== undefined && !/^https?:\/\/[^/]+\/.*oidc\/callback$/.test(redirectUri))
    throw new Error(`invalid --oidc-redirect-uri "${redirectUri}": <origin>/<context>/ui/oidc/callback`);
  return {
    oidc: {
      issuer,
      clientId,
      clientSecretFile: resolve(secretFile),
      audience: v.text('oidc-audience') || clientId,
      rolesClaim: v.text('oidc-roles-claim') || 'groups',
      roleMap: roleMap(v.text('oidc-role-map') ?? ''),
      userClaim: v.text('oidc-user-claim') || 'preferred_username',
      createUsers: v.switchOn('oidc-create-users', true),
      only,
      ...(redirectUri ? { redirectUri } : {}),
    },
  };
}

/** Only https, except on a loopback address (a provider on the same machine, or a test's). */
function checkIssuer(issuer: string): void {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`invalid --oidc-issuer "${issuer}": a URL`);
  }
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return;
  throw new Error(`invalid --oidc-issuer "${issuer}": https (http only on a loopback address)`);
}

export const isLoopbackHost = (host: string): boolean =>
  host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** `claimValue=Role,…` → a map; a value may hold `=` up to the last one (`cn=ops,dc=x` are separate entries). */
function roleMap(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of text.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const eq = entry.lastIndexOf('=');
    const value = entry.slice(0, eq).trim();
    const role = entry.slice(eq + 1).trim();
    if (eq <= 0 || value === '' || role === '')
      throw new Error(`invalid --oidc-role-map entry "${entry}": claimValue=Role`);
    map.set(value, role);
  }
  return map;
}
