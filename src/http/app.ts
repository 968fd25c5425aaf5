import type { AccountRouteDeps } from './json/account-routes.ts';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import fastifySwagger from '@fastify/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import { type Config, interfacePaths } from '../config/config.ts';
import { allTypes, definitionTypes, requireType } from '../model/registry.ts';
import type { Principal } from '../security/privileges.ts';
import type { Authenticator } from '../services/auth.ts';
import type { EventService } from '../services/events.ts';
import type { ObjectService } from '../services/objects.ts';
import type { MessageServices } from './json/message-routes.ts';
import type { CarExporter } from '../services/car-export.ts';
import type { ImportService } from '../services/car-import.ts';
import type { Store } from '../store/store.ts';
import type { Feed } from '../feed/feed.ts';
import { xmlInterface } from './xml/plugin.ts';
import { addCors } from './cors.ts';
import { completeDocument, type OpenApiDocument } from './openapi-document.ts';
import { renderError } from './errors.ts';
import { installGuards, serverOptions } from './guards.ts';
import type { JobRouteDeps } from './json/job-routes.ts';
import type { LoadReport } from '../services/load.ts';
import type { Sessions } from '../services/sessions.ts';
import { registerDashboard } from './ui/dashboard.ts';
import type { SingleSignOn } from './ui/oidc-routes.ts';
import { jsonInterface } from './json/plugin.ts';
import type { ForecastService } from '../services/forecast.ts';
import type { DeadlineService } from '../services/deadlines.ts';
import type { AuditService } from '../services/audit.ts';
import { ERROR_SCHEMA, formSchema, inputSchema, outputSchema } from './json/schemas.ts';
import { lazySchemas } from './lazy-schemas.ts';
import { requestContext, requestIdFrom } from '../log/request-context.ts';
import { type OpsDeps, opsRoutes } from './ops-routes.ts';
import type { WindowOpenings } from '../services/window-openings.ts';
import type { RuntimeAnswers } from '../services/runtime-answers.ts';
import type { FileWatchStatus } from '../services/file-watch-status.ts';
import { clientAddress, proxyTrust } from './client-address.ts';
import { ServerTls } from './tls.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyInstance {
    /** Compiles the route schemas not used yet (they compile on first use); `millrace serve` calls it before listening. */
    warmSchemas(): Promise<void>;
    /** HTTPS's certificates (docs/architecture.md §10); absent on plain HTTP. */
    serverTls?: ServerTls;
  }
}

export interface AppDeps {
  config: Pick<Config, 'context' | 'vendor' | 'vendorFolder' | 'corsOrigins' | 'limits' | 'tls' | 'trustProxy'>;
  logger: Logger;
  auth: Authenticator;
  objects: ObjectService;
  jobs: JobRouteDeps;
  messages: MessageServices;
  events: EventService;
  imports: ImportService;
  /** The planned starts of `GET /forecast`. */
  forecast: ForecastService;
  /** Today's deadlines of `GET /deadlines`. */
  deadlines: DeadlineService;
  /** The audit log of `GET /AuditEntry` and its restore (docs/architecture.md §18). */
  audit: AuditService;
  /** The live feed served at …/stream. */
  feed: Feed;
  exporter: CarExporter;
  /** A time window's openings (`GET /TimeWindow/<key>/openings`). */
  windows: WindowOpenings;
  /** Runtime statistics and estimates (`GET /JobDefinition/<key>/statistics`, `GET /Job/<id>/estimate`). */
  runtime: RuntimeAnswers;
  /** A process server's file watches (`GET /ProcessServer/<key>/filewatches`). */
  fileWatches: FileWatchStatus;
  store: Store;
  /** Users, roles and API keys (`/User`, `/Role`), and the zone their dates are written in. */
  accounts: AccountRouteDeps['accounts'];
  defaultTimeZone: string;
  /** The web dashboard: its sessions and the load of queues and process servers. */
  dashboard: { sessions: Sessions; load: LoadReport };
  /** Single sign-on (the dashboard's sign-in through the issuer, bearer tokens on the JSON interface); optional. */
  sso?: SingleSignOn;
  version: string;
  /** The XML interface's version string, `<dotted_version>-<date>-<time>_<digits>`. */
  versionString: string;
  /** Health checks and metrics (`/health/*`, `/metrics`); without it those routes are absent. */
  ops?: OpsDeps;
}

export const BODY_LIMIT = 1024 * 1024;

/** Builds the HTTP application. It never listens: `main.ts` does, tests use `inject()` or port 0. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const paths = interfacePaths(deps.config);
  const trusts = proxyTrust(deps.config.trustProxy);
  const guard = {
    limits: deps.config.limits,
    root: paths.root,
    xmlBase: paths.xmlBase,
    trusts,
  };
  const schemas = lazySchemas();
  const tls = deps.config.tls ? new ServerTls(deps.config.tls) : undefined;
  const app = createFastify(guard, schemas, { tls, trusts });
  addRequestHooks(app, deps, guard, schemas);
  addSharedSchemas(app);
  await registerOpenApi(app, deps, paths);
  addErrorHandlers(app, deps.logger);
  app.get(paths.swagger, { schema: { hide: true } }, async (_req, reply) =>
    reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })),
  );
  if (deps.ops) opsRoutes(app, deps.ops);
  await registerInterfaces(app, deps, paths);
  return app;
}

type Guard = Parameters<typeof installGuards>[1];
type Paths = ReturnType<typeof interfacePaths>;

/** The Fastify instance with the guards' server options, each request run in its own logging context. */
function createFastify(
  guard: Guard,
  schemas: ReturnType<typeof lazySchemas>,
  transport: { tls: ServerTls | undefined; trusts: ((address: string) => boolean) | undefined },
): FastifyInstance {
  const options = serverOptions(guard);
  const { tls, trusts } = transport;
  const handle =
    (handler: (req: IncomingMessage, res: ServerResponse) => void) => (req: IncomingMessage, res: ServerResponse) =>
      requestContext.run({ id: requestIdFrom(req.headers['x-request-id']) }, handler, req, res);
  const app = Fastify({
    ...options,
    // Keys are at most 323 characters (a queue provider: four names of 80 and three dots); longer ones are 414.
    routerOptions: { maxParamLength: 400 },
    // No framework logger: it would build a child logger per request and log each one, which costs more than
    // serving a cached object. Unexpected errors and lifecycle lines go to our own logger below.
    logger: false,
    bodyLimit: BODY_LIMIT,
    // While closing (SIGTERM), requests that still arrive on open keep-alive connections are served (the engine runs
    // until they are answered) rather than refused with Fastify's own 503: a node restarted in turn fails no request;
    // new connections are refused, which clients retry on another node.
    return503OnClosing: false,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Each request runs in its own context, so every line logged while serving it carries its id. Fastify ignores
    // its `http` options (the guards' timeouts) when it is given a server: they are passed on here.
    // Over HTTPS when given a certificate (docs/architecture.md §10), for every route and the agents' upgrade.
    serverFactory: (handler) =>
      tls
        ? createHttpsServer({ ...options.http, ...tls.serverOptions() }, handle(handler))
        : createServer(options.http, handle(handler)),
    // The client's address (client-address.ts): X-Forwarded-For believed from the trusted proxies only.
    ...(trusts ? { trustProxy: (address: string) => trusts(address) } : {}),
    schemaController: { compilersFactory: schemas.compilersFactory },
    genReqId: (req) => requestContext.getStore()?.id ?? requestIdFrom(req.headers['x-request-id']),
  }) as unknown as FastifyInstance;
  if (tls) app.decorate('serverTls', tls);
  return app;
}

/** The request id header, the access log, CORS and the guards, in the order they must run. */
function addRequestHooks(
  app: FastifyInstance,
  deps: AppDeps,
  guard: Guard,
  schemas: ReturnType<typeof lazySchemas>,
): void {
  // Hooks that never wait take Fastify's callback form: an async hook costs every request a promise and a turn of
  // the microtask queue before the next hook runs (bench/README.md, get-object.ts).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-Id', req.id);
    done();
  });
  // The access log: what was asked and answered, never headers, query strings or bodies (keys, passwords).
  const metrics = deps.ops?.metrics;
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url;
    metrics?.request(req.method, route, reply.statusCode, reply.elapsedTime);
    if (deps.logger.isLevelEnabled('info'))
      deps.logger.info(
        {
          reqId: req.id,
          method: req.method,
          path: req.url.split('?')[0],
          route,
          client: clientAddress(req),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request',
      );
    done();
  });
  app.decorate('warmSchemas', schemas.warm);
  app.decorateRequest('principal', null as unknown as Principal);
  addCors(app, deps.config.corsOrigins);
  const stopGuards = installGuards(app, guard);
  app.addHook('onClose', async () => stopGuards());
}

/** The schemas routes of both interfaces refer to by id: the error record, each type's input, output and forms. */
function addSharedSchemas(app: FastifyInstance): void {
  app.addSchema(ERROR_SCHEMA);
  for (const type of definitionTypes()) {
    app.addSchema(outputSchema(type));
    app.addSchema(inputSchema(type));
  }
  app.addSchema(outputSchema(requireType('Job')));
  for (const type of allTypes()) for (const form of Object.values(type.forms)) app.addSchema(formSchema(form));
  for (const kind of ['OperatorMessage', 'UserMessage', 'Alert'] as const)
    app.addSchema(outputSchema(requireType(kind)));
  app.addSchema(outputSchema(requireType('Event')));
}

/** The OpenAPI document of the JSON interface, drawn from the route schemas and completed for what they omit. */
async function registerOpenApi(app: FastifyInstance, deps: AppDeps, paths: Paths): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Millrace JSON interface',
        description:
          'Objects of the Millrace workload-automation server. Every request except this document carries an API key in the X-API-Key header.',
        version: deps.version,
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (d) =>
      'openapiObject' in d
        ? (completeDocument(d.openapiObject as OpenApiDocument, paths.jsonBase, 'Apache-2.0') as typeof d.openapiObject)
        : d.swaggerObject,
  });
}

/** Every error and unknown route answered with the interface's error record; only unexpected ones are logged. */
function addErrorHandlers(app: FastifyInstance, logger: Logger): void {
  app.setErrorHandler((err, req, reply) => {
    const e = renderError(err, BODY_LIMIT);
    if (e.unexpected)
      logger.error({ err, reqId: req.id, method: req.method, path: req.url.split('?')[0] }, 'request failed');
    return reply.code(e.status).headers(e.headers).send({ code: e.code, message: e.message });
  });
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ code: '404', message: `No resource at ${req.method} ${req.url.split('?')[0]}` }),
  );
}

/** The JSON and XML interfaces under their bases, then the dashboard. */
async function registerInterfaces(app: FastifyInstance, deps: AppDeps, paths: Paths): Promise<void> {
  const jsonPlugin: FastifyPluginAsync = (scope) =>
    jsonInterface(scope, {
      ...deps,
      sessions: deps.dashboard.sessions,
      accounts: { accounts: deps.accounts, auth: deps.auth, defaultTimeZone: deps.defaultTimeZone },
    });
  await app.register(jsonPlugin, { prefix: paths.jsonBase });
  const xmlPlugin: FastifyPluginAsync = (scope) =>
    xmlInterface(scope, {
      auth: deps.auth,
      objects: deps.objects,
      jobs: deps.jobs.jobs,
      exporter: deps.exporter,
      imports: deps.imports,
      logger: deps.logger,
      version: deps.versionString,
      vendor: deps.config.vendor,
      xmlBase: paths.xmlBase,
    });
  await app.register(xmlPlugin, { prefix: paths.xmlBase });
  await registerDashboard(app, {
    ...deps.dashboard,
    exporter: deps.exporter,
    root: paths.root,
    jsonBase: paths.jsonBase,
    logger: deps.logger,
    ...(deps.sso ? { sso: deps.sso } : {}),
  });
}
