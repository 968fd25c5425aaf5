import type { OidcSettings } from '../config/oidc.ts';

/** What an ID token or access token claims, as decoded JSON. */
export type Claims = Readonly<Record<string, unknown>>;

/** The value at a dotted path (`realm_access.roles`); own properties only, as everything read from outside. */
export function claimAt(claims: Claims, path: string): unknown {
  let at: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/**
 * The Millrace roles a token's roles claim gives (docs/architecture.md §10): through the role map when one is
 * configured (only mapped values count, so a group the identity provider happens to name `Administrator` grants
 * nothing unmapped), otherwise each value naming an existing role. Roles that do not exist are dropped; sorted.
 */
export function rolesFrom(
  claims: Claims,
  settings: Pick<OidcSettings, 'rolesClaim' | 'roleMap'>,
  knownRoles: ReadonlySet<string>,
): string[] {
  const raw = claimAt(claims, settings.rolesClaim);
  const values = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.filter((v) => typeof v === 'string') : [];
  const roles = new Set<string>();
  for (const value of values) {
    const role = settings.roleMap.size > 0 ? settings.roleMap.get(value) : value;
    if (role !== undefined && knownRoles.has(role)) roles.add(role);
  }
  return [...roles].sort();
}

/** The user name a token gives: its user claim, else `sub`; undefined when neither is a non-empty string. */
export function userNameFrom(claims: Claims, settings: Pick<OidcSettings, 'userClaim'>): string | undefined {
  for (const path of [settings.userClaim, 'sub']) {
    const v = claimAt(claims, path);
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}
