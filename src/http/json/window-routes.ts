import type { FastifyInstance } from 'fastify';
import { OPENINGS_PARAMS, type WindowOpenings } from '../../services/window-openings.ts';
import { errorResponses } from './schemas.ts';

/** `GET /TimeWindow/<key>/openings`: when a time window is open within a range (src/services/window-openings.ts). */
export function registerWindowRoutes(
  app: FastifyInstance,
  windows: WindowOpenings,
  served: Map<string, Set<string>>,
): void {
  served.set('/TimeWindow/:key/openings', new Set(['GET']));
  const date = (description: string) => ({ type: 'string', description });
  app.get<{ Params: { key: string }; Querystring: unknown }>('/TimeWindow/:key/openings', {
    schema: {
      tags: ['TimeWindow'],
      summary: "The window's open intervals within From..Until (at most 366 days), clipped to it, in order",
      params: {
        type: 'object',
        properties: {
          key: { type: 'string', description: 'Business key `<partition>.<name>`; a bare name means GLOBAL' },
        },
        required: ['key'],
      },
      querystring: {
        type: 'object',
        properties: Object.fromEntries(
          OPENINGS_PARAMS.map((p) => [p.name, { type: 'string', description: p.description }]),
        ),
        required: ['From', 'Until'],
      },
      response: {
        200: {
          type: 'object',
          description: "Dates in the window's TimeZone (UTC when it has none)",
          properties: {
            items: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  From: date('Opens (or the range start, when already open then)'),
                  Until: date('Closes (or the range end, when still open then)'),
                },
                required: ['From', 'Until'],
                additionalProperties: false,
              },
            },
          },
          required: ['items'],
          additionalProperties: false,
        },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    handler: (req) => windows.openings(req.principal, req.params.key, req.query),
  });
}
