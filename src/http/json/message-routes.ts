import type { FastifyInstance } from 'fastify';
import type { OperatorMessages } from '../../services/operator-messages.ts';
import { errorResponses } from './schemas.ts';

type Req = { Params: { key: string }; Body: unknown };

/** Spec §4 row 14: read an operator message and reply to it. */
export function registerMessageRoutes(
  app: FastifyInstance,
  messages: OperatorMessages,
  served: Map<string, Set<string>>,
): void {
  served.set('/OperatorMessage/:key', new Set(['GET']));
  served.set('/OperatorMessage/:key/reply', new Set(['PUT']));
  const params = {
    type: 'object',
    properties: { key: { type: 'string', description: 'The operator message id' } },
    required: ['key'],
  };
  const out = { $ref: 'OperatorMessage#' };
  app.get<Req>('/OperatorMessage/:key', {
    schema: {
      tags: ['OperatorMessage'],
      summary: 'Read an operator message',
      params,
      response: { 200: out, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => messages.get(req.principal, req.params.key),
  });
  app.put<Req>('/OperatorMessage/:key/reply', {
    schema: {
      tags: ['OperatorMessage'],
      summary: 'Reply to an operator message; the reply must match its ReplyExpression',
      params,
      body: {
        type: 'object',
        properties: { Reply: { type: 'string', maxLength: 1000 } },
        required: ['Reply'],
        additionalProperties: false,
      },
      response: { 200: out, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => messages.reply(req.principal, req.params.key, req.body),
  });
}
