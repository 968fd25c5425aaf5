import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { JOB_ACTIONS, jobAction } from '../../domain/job-actions.ts';
import { FINAL } from '../../domain/job-status.ts';
import { NOT_STARTED } from '../../domain/process-properties.ts';
import { invalid, unauthenticated } from '../../errors.ts';
import { isPlainObject } from '../../model/validate.ts';
import type { CarExporter } from '../../services/car-export.ts';
import type { LoadReport } from '../../services/load.ts';
import { SESSION_CHALLENGE, type Session, Sessions } from '../../services/sessions.ts';
import { registerDefinitionRoutes } from './definition-routes.ts';
import { DASHBOARD_HEADERS } from './security-headers.ts';
import { clearSessionCookie, requireCsrf, sessionCookie, setSessionCookie } from './session-cookie.ts';
import { loadStaticFiles, type StaticFile } from './static-files.ts';
import { registerSsoRoutes, type SingleSignOn } from './oidc-routes.ts';

export interface DashboardDeps {
  sessions: Sessions;
  load: LoadReport;
  /** One object's CAR export, offered by the definition pages as a download. */
  exporter: CarExporter;
  /** The context root (`/millrace`, or empty) and the JSON interface's base path the page calls. */
  root: string;
  jsonBase: string;
  /** Sign-in through an OpenID Connect issuer, when one is configured. */
  sso?: SingleSignOn;
  logger: Logger;
}

const HIDDEN = { schema: { hide: true } };

/** What the page may offer, from the action table: each action with the statuses it applies in ... */
const ACTION_STATUSES = Object.fromEntries(JOB_ACTIONS.map((a) => [a, jobAction(a).applies]));
/** ... and the buttons, in the table's order, with the privileges each needs and what its answer is. */
const ACTION_BUTTONS = JOB_ACTIONS.flatMap((name) => {
  const { button, privileges, body, creates } = jobAction(name);
  return button ? [{ name, ...button, privileges, body, creates }] : [];
});

/**
 * The web dashboard at `<context>/ui/`: its static files, sign-in/sign-out and two small JSON
 * answers the JSON interface has no place for (who am I, load of queues and process servers). Everything else
 * the page reads and changes through the JSON interface itself, with the session cookie instead of an API key.
 */
export async function registerDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const ui = `${deps.root}/ui`;
  const files = loadStaticFiles();

  const sendFile = (req: FastifyRequest, reply: FastifyReply, file: StaticFile | undefined, path: string) => {
    reply.headers(DASHBOARD_HEADERS);
    if (!file) return reply.code(404).send({ code: '404', message: `No resource at GET ${path}` });
    reply.header('ETag', file.etag).header('Cache-Control', 'no-cache');
    if (req.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.type(file.type).send(file.body);
  };

  const session = async (req: FastifyRequest): Promise<Session> => {
    const s = await deps.sessions.resolve(sessionCookie(req), req.ip);
    if (!s) throw unauthenticated(SESSION_CHALLENGE);
    return s;
  };
  const me = (s: Session) => ({
    user: s.user,
    roles: s.principal.roles,
    grants: s.principal.grants,
    csrf: s.csrf,
    csrfHeader: 'X-Millrace-CSRF',
    expiresAt: deps.sessions.expiresAt(s),
    serverTime: deps.sessions.now(),
    lifetimeSeconds: Sessions.LIFETIME_MS / 1000,
    idleTimeoutSeconds: Sessions.IDLE_MS / 1000,
    jsonBase: deps.jsonBase,
    actions: ACTION_STATUSES,
    actionButtons: ACTION_BUTTONS,
    finalStatuses: FINAL,
    modifiableStatuses: [...NOT_STARTED],
  });

  // A plugin scope, so the hook below applies to the dashboard's routes only.
  await app.register((scope, _options, done) => {
    scope.addHook('onRequest', async (req, reply) => {
      if (req.url.startsWith(`${ui}/api/`)) reply.headers(DASHBOARD_HEADERS).header('Cache-Control', 'no-store');
    });
    scope.get(ui, HIDDEN, (_req, reply) => reply.headers(DASHBOARD_HEADERS).redirect(`${ui}/`, 301));
    // The server's root and its context are where a person types the address: both lead to the dashboard (302,
    // so a browser does not remember it should the context change).
    const entries = new Set(['/', ...(deps.root ? [deps.root, `${deps.root}/`] : [])]);
    for (const entry of entries)
      scope.get(entry, HIDDEN, (_req, reply) => reply.headers(DASHBOARD_HEADERS).redirect(`${ui}/`, 302));
    scope.get(`${ui}/`, HIDDEN, (req, reply) => sendFile(req, reply, files.get('index.html'), req.url));
    scope.get<{ Params: { '*': string } }>(`${ui}/*`, HIDDEN, (req, reply) =>
      sendFile(req, reply, files.get(req.params['*']), req.url.split('?')[0] ?? ''),
    );

    scope.post<{ Body: unknown }>(`${ui}/api/session`, HIDDEN, async (req, reply) => {
      const body = req.body;
      if (!isPlainObject(body) || typeof body.user !== 'string' || typeof body.password !== 'string')
        throw invalid('Sign in with a JSON body {"user": "…", "password": "…"}');
      const { id, session: s } = await deps.sessions.signIn(body.user, body.password, req.ip);
      setSessionCookie(req, reply, deps.root, id);
      return me(s);
    });
    scope.get(`${ui}/api/session`, HIDDEN, async (req) => me(await session(req)));
    // What the sign-in page offers, asked before anyone is signed in.
    scope.get(`${ui}/api/signin-options`, HIDDEN, () => ({
      passwords: !deps.sso?.signIn.only,
      sso: deps.sso ? { label: deps.sso.signIn.label, url: `${ui}/oidc/login` } : null,
    }));
    if (deps.sso) registerSsoRoutes(scope, { ...deps, sso: deps.sso, ui });
    scope.delete(`${ui}/api/session`, HIDDEN, async (req, reply) => {
      const s = await session(req);
      requireCsrf(req, s);
      await deps.sessions.signOut(sessionCookie(req));
      clearSessionCookie(reply, deps.root);
      return reply.code(204).send();
    });
    scope.get(`${ui}/api/load`, HIDDEN, async (req) => deps.load.of((await session(req)).principal));
    registerDefinitionRoutes(scope, ui, { exporter: deps.exporter, session });
    done();
  });
}
