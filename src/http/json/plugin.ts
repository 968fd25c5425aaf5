import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../services/auth.ts';
import type { EventService } from '../../services/events.ts';
import type { ObjectService } from '../../services/objects.ts';
import { addMethodNotAllowed } from '../method-not-allowed.ts';
import type { ImportService } from '../../services/car-import.ts';
import { registerEventRoutes } from './event-routes.ts';
import { registerImportRoute } from './import-route.ts';
import { type JobRouteDeps, registerJobRoutes } from './job-routes.ts';
import { registerListRoutes } from './list-routes.ts';
import { type MessageServices, registerMessageRoutes } from './message-routes.ts';
import { registerObjectRoutes } from './object-routes.ts';

export interface JsonInterfaceDeps {
  auth: Authenticator;
  objects: ObjectService;
  jobs: JobRouteDeps;
  messages: MessageServices;
  events: EventService;
  imports: ImportService;
}

/**
 * The JSON interface of spec document 1, registered under its base URL. Every route needs an API key in
 * `X-API-Key` (Node lower-cases header names, so any spelling works); keys in the query string are ignored.
 */
export async function jsonInterface(app: FastifyInstance, deps: JsonInterfaceDeps): Promise<void> {
  // Only JSON bodies; anything else is 415. An empty body counts as no body, so `POST …/submit` with a
  // Content-Type header and nothing else still works.
  app.removeAllContentTypeParsers();
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') done(null, undefined);
    else void defaultJson(req, body as string, done);
  });

  // Bodies are validated by the registry (precise messages naming the field); the schemas document the routes.
  app.setValidatorCompiler(() => () => true);

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const header = req.headers['x-api-key'];
    req.principal = await deps.auth.authenticateApiKey(typeof header === 'string' ? header : undefined, req.ip);
    reply.header('Cache-Control', 'no-store');
  });

  const served = new Map<string, Set<string>>();
  registerObjectRoutes(app, deps.objects, served);
  registerJobRoutes(app, deps.jobs, served);
  registerMessageRoutes(app, deps.messages, served);
  registerEventRoutes(app, deps.events, served);
  await registerImportRoute(app, deps.imports, deps.jobs.jobs, served);
  registerListRoutes(app, { objects: deps.objects, jobs: deps.jobs.jobs, messages: deps.messages }, served);
  addMethodNotAllowed(app, served);
}
