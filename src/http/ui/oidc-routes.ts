import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { OidcBearer } from '../../services/oidc-bearer.ts';
import { FLOW_SECONDS, type OidcSignIn, SsoRefused } from '../../services/oidc-sign-in.ts';
import type { Sessions } from '../../services/sessions.ts';
import { DASHBOARD_HEADERS } from './security-headers.ts';
import { readCookie, setSessionCookie } from './session-cookie.ts';

/** Single sign-on's parts: the dashboard's sign-in through the issuer and the JSON interface's bearer tokens. */
export interface SingleSignOn {
  signIn: OidcSignIn;
  bearer: OidcBearer;
}

const HIDDEN = { schema: { hide: true } };
/** The cookie carrying a sign-in under way from the login route to the callback (sealed by OidcSignIn). */
const FLOW_COOKIE = 'millrace_oidc';

/**
 * The dashboard's sign-in through the OpenID Connect issuer (docs/architecture.md §10): `<ui>/oidc/login` sends the
 * browser to the issuer, `<ui>/oidc/callback` takes it back, starts a session exactly as a password sign-in does
 * and leads to the dashboard; a refusal leads to the sign-in page with its reason (`?sso=<reason>`). The flow's
 * cookie is SameSite=Lax: the callback is a navigation coming from the issuer's site, which a Strict cookie misses.
 */
export function registerSsoRoutes(
  scope: FastifyInstance,
  deps: { sso: SingleSignOn; sessions: Sessions; ui: string; root: string; logger: Logger },
): void {
  const { sso, ui } = deps;
  const flowPath = `${ui}/oidc/`;
  const secure = (req: FastifyRequest) => (req.protocol === 'https' ? '; Secure' : '');
  const clearFlow = (req: FastifyRequest, reply: FastifyReply) =>
    reply.header('Set-Cookie', `${FLOW_COOKIE}=; Path=${flowPath}; Max-Age=0; HttpOnly; SameSite=Lax${secure(req)}`);

  scope.get(`${ui}/oidc/login`, HIDDEN, async (req, reply) => {
    reply.headers(DASHBOARD_HEADERS).header('Cache-Control', 'no-store');
    const origin = `${req.protocol}://${req.host}`;
    let begun: { url: string; flow: string };
    try {
      begun = await sso.signIn.begin(sso.signIn.redirectUri(origin, ui));
    } catch (err) {
      deps.logger.warn({ err }, 'single sign-on: the issuer cannot be reached');
      return reply.redirect(`${ui}/?sso=unavailable`, 302);
    }
    reply.header(
      'Set-Cookie',
      `${FLOW_COOKIE}=${begun.flow}; Path=${flowPath}; Max-Age=${FLOW_SECONDS}; HttpOnly; SameSite=Lax${secure(req)}`,
    );
    return reply.redirect(begun.url, 302);
  });

  scope.get(`${ui}/oidc/callback`, HIDDEN, async (req, reply) => {
    reply.headers(DASHBOARD_HEADERS).header('Cache-Control', 'no-store');
    clearFlow(req, reply);
    const query = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
    try {
      const user = await sso.signIn.finish(query, readCookie(req, FLOW_COOKIE));
      const { id } = await deps.sessions.startFor(user.name, req.ip);
      await deps.sessions.recordSignIn(user.name, true, req.ip);
      setSessionCookie(req, reply, deps.root, id);
      return reply.redirect(`${ui}/`, 302);
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      await deps.sessions.recordSignIn('', false, req.ip);
      deps.logger.info({ reason: err.reason, detail: err.message }, 'single sign-on refused');
      return reply.redirect(`${ui}/?sso=${err.reason}`, 302);
    }
  });
}
