import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../../errors.ts';
import type { Authenticator } from '../../services/auth.ts';
import type { EventService } from '../../services/events.ts';
import type { ObjectService } from '../../services/objects.ts';
import type { Sessions } from '../../services/sessions.ts';
import type { OidcBearer } from '../../services/oidc-bearer.ts';
import { requireCsrf, sessionCookie } from '../ui/session-cookie.ts';
import { addMethodNotAllowed } from '../method-not-allowed.ts';
import type { ImportService } from '../../services/car-import.ts';
import { type AccountRouteDeps, registerAccountRoutes } from './account-routes.ts';
import { registerEventRoutes } from './event-routes.ts';
import type { ForecastService } from '../../services/forecast.ts';
import { registerForecastRoute } from './forecast-routes.ts';
import type { DeadlineService } from '../../services/deadlines.ts';
import { registerDeadlineRoutes } from './deadline-routes.ts';
import type { AuditService } from '../../services/audit.ts';
import { registerAuditRoutes } from './audit-routes.ts';
import { registerImportRoute } from './import-route.ts';
import { type JobRouteDeps, registerJobRoutes } from './job-routes.ts';
import { registerBulkRoutes } from './bulk-routes.ts';
import { registerListRoutes } from './list-routes.ts';
import { type MessageServices, registerMessageRoutes } from './message-routes.ts';
import { registerObjectRoutes } from './object-routes.ts';
import { registerStreamRoute } from './stream-route.ts';
import { registerWaitingRoutes } from './waiting-routes.ts';
import { registerWindowRoutes } from './window-routes.ts';
import { registerRuntimeRoutes } from './runtime-routes.ts';
import type { RuntimeAnswers } from '../../services/runtime-answers.ts';
import { registerFileWatchRoutes } from './file-watch-routes.ts';
import type { FileWatchStatus } from '../../services/file-watch-status.ts';
import type { WindowOpenings } from '../../services/window-openings.ts';
import type { Feed } from '../../feed/feed.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export interface JsonInterfaceDeps {
  auth: Authenticator;
  objects: ObjectService;
  jobs: JobRouteDeps;
  messages: MessageServices;
  events: EventService;
  imports: ImportService;
  windows: WindowOpenings;
  fileWatches: FileWatchStatus;
  forecast: ForecastService;
  deadlines: DeadlineService;
  /** The audit log (docs/architecture.md §18). */
  audit: AuditService;
  /** Runtime statistics and estimates. */
  runtime: RuntimeAnswers;
  /** Users, roles and API keys, for administrators. */
  accounts: AccountRouteDeps;
  /** The dashboard's sessions: their cookie stands in for an API key. */
  sessions?: Sessions;
  /** Single sign-on: `Authorization: Bearer <access token>` of the issuer stands in for an API key. */
  sso?: { bearer: OidcBearer };
  feed: Feed;
}

/**
 * The JSON interface (docs/interfaces.md §2–§6), registered under its base URL. Every route needs an API key in
 * `X-API-Key` (Node lower-cases header names, so any spelling works); keys in the query string are ignored.
 * Without a key, the dashboard's session cookie is accepted instead, and then a state-changing request must also
 * carry the session's CSRF token (X-Millrace-CSRF). With single sign-on configured, an access token of its issuer
 * in `Authorization: Bearer` is accepted too (docs/architecture.md §10); an API key, when also sent, decides.
 */
export async function jsonInterface(app: FastifyInstance, deps: JsonInterfaceDeps): Promise<void> {
  // Only JSON bodies; anything else is 415. An empty body counts as no body, so `POST …/submit` with a
  // Content-Type header and nothing else still works.
  app.removeAllContentTypeParsers();
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  // Bytes that are not UTF-8 are refused rather than stored as U+FFFD (a silent change of what was sent).
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      done(invalid('The body is not valid UTF-8'), undefined);
      return;
    }
    if (text === '') done(null, undefined);
    else void defaultJson(req, text, done);
  });

  // Bodies are validated by the registry (precise messages naming the field); the schemas document the routes.
  app.setValidatorCompiler(() => () => true);

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store').header('X-Content-Type-Options', 'nosniff');
    const header = req.headers['x-api-key'];
    if (header === undefined && deps.sessions) {
      const session = await deps.sessions.resolve(sessionCookie(req), req.ip);
      if (session) {
        requireCsrf(req, session);
        req.principal = { ...session.principal, via: { interface: 'console', address: req.ip, apiKeyId: null } };
        return;
      }
    }
    const bearer = header === undefined && deps.sso ? bearerToken(req.headers.authorization) : undefined;
    if (bearer !== undefined && deps.sso) {
      req.principal = await deps.sso.bearer.authenticate(bearer, req.ip);
      return;
    }
    req.principal = await deps.auth.authenticateApiKey(typeof header === 'string' ? header : undefined, req.ip);
  });

  const served = new Map<string, Set<string>>();
  registerObjectRoutes(app, deps.objects, served);
  registerJobRoutes(app, deps.jobs, served);
  registerBulkRoutes(app, deps.jobs);
  registerWaitingRoutes(app, deps.jobs.waiting, served);
  registerMessageRoutes(app, deps.messages, served);
  registerEventRoutes(app, deps.events, served);
  await registerImportRoute(app, deps.imports, deps.jobs.jobs, served);
  registerStreamRoute(app, deps.feed, served);
  registerWindowRoutes(app, deps.windows, served);
  registerRuntimeRoutes(app, deps.runtime, served);
  registerFileWatchRoutes(app, deps.fileWatches, served);
  registerForecastRoute(app, deps.forecast, served);
  registerDeadlineRoutes(app, deps.deadlines, served);
  registerAccountRoutes(app, deps.accounts, served);
  registerAuditRoutes(app, deps.audit, served);
  registerListRoutes(
    app,
    { objects: deps.objects, jobs: deps.jobs.jobs, messages: deps.messages, events: deps.events },
    served,
  );
  addMethodNotAllowed(app, served);
}

/** The token of `Authorization: Bearer <token>`, or undefined for any other header (or none). */
function bearerToken(header: string | undefined): string | undefined {
  const m = header === undefined ? null : /^Bearer +(\S+)\s*$/i.exec(header);
  return m?.[1];
}
