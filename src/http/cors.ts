/*
 * CORS for an allow-list of origins (MILLRACE_CORS_ORIGINS), off when the list is empty. Written here rather than
 * taken from @fastify/cors (not a dependency): the policy is a fixed list compared exactly, a few lines, and it
 * must answer preflights before authentication, which runs in the interfaces' own hooks.
 */
import type { FastifyInstance } from 'fastify';

const METHODS = 'GET, POST, PUT, DELETE';
/** Browsers may keep a preflight's answer this many seconds. */
const MAX_AGE = '600';

/** Adds the CORS headers for allowed origins and answers their preflights (`OPTIONS` with a requested method). */
export function addCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || !allowed.has(origin)) return;
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Vary', 'Origin');
    const requested = req.headers['access-control-request-method'];
    if (req.method !== 'OPTIONS' || typeof requested !== 'string') {
      reply.header('Access-Control-Expose-Headers', 'Content-Range, Content-Disposition, Location, Retry-After');
      return;
    }
    // A preflight: answered here, before any authentication (browsers send it without credentials). The requested
    // headers (X-API-Key, Authorization, Content-Type, Range, X-<Vendor>-…) are granted to an allowed origin as asked.
    const headers = req.headers['access-control-request-headers'];
    reply.header('Access-Control-Allow-Methods', METHODS);
    if (typeof headers === 'string' && headers !== '') reply.header('Access-Control-Allow-Headers', headers);
    reply.header('Access-Control-Max-Age', MAX_AGE);
    return reply.code(204).send();
  });
}
