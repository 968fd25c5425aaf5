import type { FastifyRequest } from 'fastify';

/**
 * A route's privilege checks that need no body, as its first `preParsing` hook (docs/architecture.md §9): after
 * authentication, before the body is read. A caller without the right to a request gets 403 (404 for what it may
 * not see) whatever body it sends, malformed, oversized or of the wrong type, and that body is never read (the
 * guards close the connection after an answer given before the body).
 */
export function authorizeFirst(check: (req: FastifyRequest) => unknown): (req: FastifyRequest) => Promise<void> {
  return async (req) => {
    await check(req);
  };
}

/** A route's path parameters, as the routes name them. */
export const pathParams = (req: FastifyRequest): Record<string, string | undefined> =>
  req.params as Record<string, string | undefined>;
