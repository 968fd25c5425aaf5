// Part of the HTTP app step (http-app.ts): single sign-on through an OpenID Connect issuer, when configured.
import { readFile } from 'node:fs/promises';
import type { Config } from '../config/config.ts';
import type { SingleSignOn } from '../http/ui/oidc-routes.ts';
import { OidcBearer } from '../services/oidc-bearer.ts';
import { OidcIssuer } from '../services/oidc-issuer.ts';
import { OidcSignIn } from '../services/oidc-sign-in.ts';
import type { ServerCore } from './core-services.ts';
import type { ServerBase } from './open-data.ts';

/** The sign-in and bearer-token parts over the configured issuer; none without `--oidc-issuer`. */
export async function buildSingleSignOn(
  config: Config,
  base: ServerBase,
  core: ServerCore,
): Promise<SingleSignOn | undefined> {
  const settings = config.oidc;
  if (!settings) return undefined;
  const secret = await readFile(settings.clientSecretFile, 'utf8').then(
    (text) => text.trim(),
    (err: unknown) => {
      throw new Error(`cannot read --oidc-client-secret-file: ${err instanceof Error ? err.message : String(err)}`);
    },
  );
  if (secret === '') throw new Error(`--oidc-client-secret-file ${settings.clientSecretFile} is empty`);
  const { store, clock } = base;
  const issuer = new OidcIssuer(settings, secret);
  return {
    signIn: new OidcSignIn({ settings, issuer, secret, accounts: core.accounts, store, clock }),
    bearer: new OidcBearer({ settings, issuer, store, auth: core.auth, clock }),
  };
}
