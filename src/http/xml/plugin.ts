import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { holdForRequest } from '../../services/import-gate.ts';
import { renderError } from '../errors.ts';
import { authorizeFirst } from '../authorize-first.ts';
import { addMethodNotAllowed } from '../method-not-allowed.ts';
import { errorDocument, XML_TYPE } from './documents.ts';
import { XML_BODY_LIMIT, type XmlInterfaceDeps, xmlRoutes } from './routes.ts';
import { wadl } from './wadl.ts';

export type { XmlInterfaceDeps } from './routes.ts';

/**
 * The XML interface (`api-rest`, docs/interfaces.md §7), with basic authentication on every service and errors as
 * `<error><code/><message/></error>` (docs/architecture.md §9), 401s included. Bodies are taken as bytes by every service and
 * checked by it: XML ones for content type, size and safety before parsing; archives for being zips.
 */
export async function xmlInterface(app: FastifyInstance, deps: Omit<XmlInterfaceDeps, 'wadl'>): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err, req, reply) => {
    const e = renderError(err, XML_BODY_LIMIT);
    if (e.unexpected)
      deps.logger.error({ err, reqId: req.id, method: req.method, path: req.url.split('?')[0] }, 'request failed');
    return reply.code(e.status).headers(e.headers).type(XML_TYPE).send(errorDocument(e.status, e.message));
  });
  app.setNotFoundHandler((req, reply) =>
    reply
      .code(404)
      .type(XML_TYPE)
      .send(errorDocument(404, `No resource at ${req.method} ${req.url.split('?')[0]}`)),
  );

  app.addHook('onRequest', async (req, reply) => {
    const h = req.headers.authorization;
    const principal = await deps.auth.authenticateBasic(typeof h === 'string' ? h : undefined, req.ip);
    req.principal = { ...principal, via: { interface: 'xml', address: req.ip, apiKeyId: null } };
    reply.header('Cache-Control', 'no-store');
  });

  const full: XmlInterfaceDeps = { ...deps, wadl: () => document };
  const routes = xmlRoutes(full);
  const document = wadl(deps.xmlBase, routes);
  const served = new Map<string, Set<string>>();
  for (const r of routes) {
    // Clients write `PUT {base_url}/car/`: the trailing slash is served too.
    for (const url of r.methods.includes('PUT') ? [r.path, `${r.path}/`] : [r.path]) {
      served.set(url, new Set(r.methods));
      app.route({
        method: r.methods,
        url,
        schema: { hide: true },
        ...(r.bodyLimit ? { bodyLimit: r.bodyLimit } : {}),
        // The caller's right first, then (for an archive) an import slot, both before the body is read.
        preParsing: [
          ...(r.authorize ? [authorizeFirst(r.authorize)] : []),
          ...(r.importsArchive
            ? [
                async (req: FastifyRequest, reply: FastifyReply) =>
                  holdForRequest(deps.imports.gate, req.raw, (release) => reply.raw.once('close', release)),
              ]
            : []),
        ],
        handler: (req, reply) => r.handler(req, reply),
      });
    }
  }
  addMethodNotAllowed(app, served);
}
