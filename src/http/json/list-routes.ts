import type { FastifyInstance } from 'fastify';
import type { ObjectType } from '../../model/object-type.ts';
import { definitionTypes } from '../../model/registry.ts';
import type { JobService } from '../../services/jobs.ts';
import { JOB_LIST_PARAMS } from '../../services/job-list.ts';
import type { ListAnswer, ListParam } from '../../services/list-query.ts';
import { inboxParams, type MessageKind } from '../../services/messages.ts';
import { OBJECT_LIST_PARAMS, type ObjectService } from '../../services/objects.ts';
import type { MessageServices } from './message-routes.ts';
import { errorResponses, outputSchemaId } from './schemas.ts';

/**
 * The lists of the operator's console, beside the spec's routes: `GET /Job`, `GET /<Type>` for every definition
 * type of the registry, and the inboxes `GET /OperatorMessage`, `/UserMessage`, `/Alert`. One answer shape,
 * `{items, next}`, newest first (jobs, messages) or by business key (definitions), paged by an opaque cursor.
 */

const querystring = (params: readonly ListParam[]) => ({
  type: 'object',
  properties: Object.fromEntries(
    params.map((p) => [p.name, { type: 'string', ...(p.schema ?? {}), description: p.description }]),
  ),
});

const page = (schemaId: string, order: string) => ({
  type: 'object',
  description: `A page of the list, ${order}`,
  properties: {
    items: { type: 'array', items: { $ref: `${schemaId}#` } },
    next: {
      type: 'string',
      nullable: true,
      description: 'Cursor of the next page (pass it as After); null on the last page',
    },
  },
  required: ['items', 'next'],
});

type Req = { Querystring: unknown };

export function registerListRoutes(
  app: FastifyInstance,
  deps: { objects: ObjectService; jobs: JobService; messages: MessageServices },
  served: Map<string, Set<string>>,
): void {
  const route = (
    url: string,
    tag: string,
    schemaId: string,
    summary: string,
    order: string,
    params: readonly ListParam[],
    handler: (req: { principal: Parameters<JobService['list']>[0]; query: unknown }) => Promise<ListAnswer>,
  ) => {
    served.set(url, new Set(['GET']));
    app.get<Req>(url, {
      schema: {
        tags: [tag],
        summary,
        querystring: querystring(params),
        response: { 200: page(schemaId, order), ...errorResponses(400, 401) },
      },
      // Sent as text: the items are rendered already, and JSON.stringify of a page costs a fraction of what
      // the schema serialiser takes for 100 jobs (the schema documents the answer).
      handler: async (req, reply) =>
        reply.type('application/json; charset=utf-8').send(JSON.stringify(await handler(req))),
    });
  };

  route(
    '/Job',
    'Job',
    'Job',
    'List and search the jobs the caller may view, newest first',
    'newest job first',
    JOB_LIST_PARAMS,
    (req) => deps.jobs.list(req.principal, req.query),
  );
  for (const type of definitionTypes())
    route(
      `/${type.name}`,
      type.name,
      outputSchemaId(type as ObjectType),
      `List and search the ${type.name} objects the caller may view`,
      'in business-key order',
      OBJECT_LIST_PARAMS,
      (req) => deps.objects.list(req.principal, type, req.query),
    );
  const inboxes: Record<MessageKind, string> = {
    OperatorMessage: 'The operator messages the caller may view, newest first',
    UserMessage: 'The user messages the caller may answer (a participant, with Reply), newest first',
    Alert: 'The alerts the caller may view, newest first',
  };
  for (const [kind, summary] of Object.entries(inboxes) as Array<[MessageKind, string]>) {
    const service =
      kind === 'OperatorMessage'
        ? deps.messages.operator
        : kind === 'UserMessage'
          ? deps.messages.user
          : deps.messages.alerts;
    route(`/${kind}`, kind, kind, summary, 'newest first', inboxParams(kind), (req) =>
      service.list(req.principal, req.query),
    );
  }
}
