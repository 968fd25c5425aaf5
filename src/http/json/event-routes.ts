import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireForm } from '../../model/registry.ts';
import type { EventService } from '../../services/events.ts';
import { authorizeFirst, pathParams } from '../authorize-first.ts';
import { errorResponses } from './schemas.ts';

type Req = { Params: { key: string }; Body: unknown };

const EVENT = { $ref: 'Event#' };
const params = (description: string) => ({
  type: 'object',
  properties: { key: { type: 'string', description } },
  required: ['key'],
});
const DEFINITION_KEY = params('The event definition `<partition>.<name>`; a bare name means GLOBAL');
const EVENT_ID = params('The event id `<definition name><RaiseSequence>`, e.g. DataReady7');
// The bodies are the Event's forms in the registry (model/types/Event.ts); app.ts adds their schemas by id.
const RAISE_BODY = { $ref: `${requireForm('Event', 'raise').id}#` };
const CLEAR_BODY = { $ref: `${requireForm('Event', 'clear').id}#` };
const ERRORS = errorResponses(400, 401, 403, 404, 409, 413, 415);
const keyOf = (req: FastifyRequest) => pathParams(req).key ?? '';

/** Raise an event, clear the raised, the pending or one event; read and delete an event (docs/interfaces.md §4). */
export function registerEventRoutes(
  app: FastifyInstance,
  events: EventService,
  served: Map<string, Set<string>>,
): void {
  served.set('/Event/:key', new Set(['GET', 'POST', 'DELETE']));
  served.set('/Event/:key/clear', new Set(['POST']));
  served.set('/EventDefinition/:key/clear', new Set(['POST']));
  served.set('/EventDefinition/:key/clearAllPending', new Set(['POST']));

  app.get<Req>('/Event/:key', {
    schema: {
      tags: ['Event'],
      summary: 'Read an event',
      params: EVENT_ID,
      response: { 200: EVENT, ...errorResponses(401, 404) },
    },
    handler: (req) => events.get(req.principal, req.params.key),
  });
  app.delete<Req>('/Event/:key', {
    preParsing: authorizeFirst((req) => events.authorizeDelete(req.principal, keyOf(req))),
    schema: {
      tags: ['Event'],
      summary: 'Delete a Cleared event from the history (409 for a Raised or Pending one; Delete privilege)',
      params: EVENT_ID,
      response: { 204: { type: 'null', description: 'Deleted; no body' }, ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => {
      await events.delete(req.principal, req.params.key);
      return reply.code(204).send();
    },
  });
  const controlled = (what: string) =>
    authorizeFirst((req) => events.controlledDefinition(req.principal, keyOf(req), what));
  app.post<Req>('/Event/:key', {
    preParsing: controlled('raise its events'),
    schema: {
      tags: ['Event'],
      summary: 'Raise an event of the definition: Raised, or Pending while another event of it is Raised',
      params: DEFINITION_KEY,
      body: RAISE_BODY,
      response: { 201: EVENT, ...ERRORS },
    },
    handler: async (req, reply) => reply.code(201).send(await events.raise(req.principal, req.params.key, req.body)),
  });
  app.post<Req>('/Event/:key/clear', {
    preParsing: authorizeFirst((req) => events.authorizeClear(req.principal, keyOf(req))),
    schema: {
      tags: ['Event'],
      summary: 'Clear a Raised or Pending event; clearing the Raised one raises the oldest Pending one',
      params: EVENT_ID,
      body: CLEAR_BODY,
      response: { 200: EVENT, ...ERRORS },
    },
    handler: (req) => events.clear(req.principal, req.params.key, req.body),
  });
  app.post<Req>('/EventDefinition/:key/clear', {
    preParsing: controlled('clear its events'),
    schema: {
      tags: ['EventDefinition'],
      summary: 'Clear the Raised event of the definition (409 when none is); the oldest Pending one becomes Raised',
      params: DEFINITION_KEY,
      body: CLEAR_BODY,
      response: { 200: EVENT, ...ERRORS },
    },
    handler: (req) => events.clearRaised(req.principal, req.params.key, req.body),
  });
  app.post<Req>('/EventDefinition/:key/clearAllPending', {
    preParsing: controlled('clear its events'),
    schema: {
      tags: ['EventDefinition'],
      summary: 'Clear every Pending event of the definition; the Raised one stays',
      params: DEFINITION_KEY,
      body: CLEAR_BODY,
      response: {
        200: {
          type: 'object',
          properties: { Cleared: { type: 'array', items: EVENT, description: 'The events cleared, oldest first' } },
          required: ['Cleared'],
          additionalProperties: false,
        },
        ...ERRORS,
      },
    },
    handler: (req) => events.clearAllPending(req.principal, req.params.key, req.body),
  });
}
