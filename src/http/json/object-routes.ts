import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ObjectType } from '../../model/object-type.ts';
import { definitionTypes } from '../../model/registry.ts';
import type { ObjectService } from '../../services/objects.ts';
import { authorizeFirst, pathParams } from '../authorize-first.ts';
import { errorResponses, inputSchemaId, outputSchemaId } from './schemas.ts';

const keyParams = (description: string) => ({
  type: 'object',
  properties: { key: { type: 'string', description } },
  required: ['key'],
});
const KEY_PARAMS = keyParams('Business key `<partition>.<name>`; a bare name means GLOBAL');
const QP_PARAMS = keyParams('`<ps_partition>.<ps_name>.<queue_partition>.<queue_name>`');

type KeyRequest = { Params: { key: string }; Body: unknown };

/** Create, read, update and delete for every definition type of the registry (docs/interfaces.md §2). */
export function registerObjectRoutes(
  app: FastifyInstance,
  objects: ObjectService,
  served: Map<string, Set<string>>,
): void {
  for (const type of definitionTypes()) registerType(app, objects, type, served);
}

function registerType(
  app: FastifyInstance,
  objects: ObjectService,
  type: ObjectType,
  served: Map<string, Set<string>>,
) {
  const url = `/${type.name}/:key`;
  served.set(url, new Set(['GET', 'POST', 'PUT', 'DELETE']));
  const params = type.key === 'queueProvider' ? QP_PARAMS : KEY_PARAMS;
  const tags = [type.name];
  const out = { $ref: `${outputSchemaId(type)}#` };
  const body = { $ref: `${inputSchemaId(type)}#` };
  const key = (req: FastifyRequest) => pathParams(req).key ?? '';

  app.get<KeyRequest>(url, {
    schema: { tags, summary: `Read a ${type.name}`, params, response: { 200: out, ...errorResponses(401, 403, 404) } },
    handler: async (req, reply) =>
      reply.type('application/json; charset=utf-8').send(await objects.getText(req.principal, type, req.params.key)),
  });
  app.post<KeyRequest>(url, {
    preParsing: authorizeFirst((req) => objects.authorizeCreate(req.principal, type, key(req))),
    schema: {
      tags,
      summary: `Create a ${type.name}`,
      params,
      body,
      response: { 201: out, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: async (req, reply) =>
      reply.code(201).send(await objects.create(req.principal, type, req.params.key, req.body)),
  });
  app.put<KeyRequest>(url, {
    preParsing: authorizeFirst((req) => objects.authorizeChange(req.principal, type, key(req), 'Edit', 'change')),
    schema: {
      tags,
      summary: `Update a ${type.name} with zero or more properties`,
      params,
      body,
      response: { 200: out, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => objects.update(req.principal, type, req.params.key, req.body),
  });
  app.delete<KeyRequest>(url, {
    preParsing: authorizeFirst((req) => objects.authorizeChange(req.principal, type, key(req), 'Delete', 'delete')),
    schema: {
      tags,
      summary: `Delete a ${type.name}`,
      params,
      response: { 204: { type: 'null', description: 'Deleted; no body' }, ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => {
      await objects.delete(req.principal, type, req.params.key);
      return reply.code(204).send();
    },
  });
}
