import type { FastifyInstance, HTTPMethods } from 'fastify';
import { MillraceError } from '../errors.ts';

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

/**
 * Registers, for every URL pattern that some methods serve, the other methods as 405 with an Allow header,
 * so a wrong method is told apart from a wrong path. These routes stay out of the description document.
 */
export function addMethodNotAllowed(app: FastifyInstance, served: ReadonlyMap<string, ReadonlySet<string>>): void {
  for (const [url, methods] of served) {
    const allow = [...methods].join(', ');
    const missing = METHODS.filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    app.route({
      method: missing,
      url,
      schema: { hide: true },
      handler: async () => {
        throw new MillraceError(405, 'METHOD_NOT_ALLOWED', `Method not allowed; this resource accepts ${allow}`, {
          Allow: allow,
        });
      },
    });
  }
}
