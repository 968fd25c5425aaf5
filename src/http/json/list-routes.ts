import type { FastifyInstance } from 'fastify';
import { definitionTypes } from '../../model/registry.ts';
import type { Principal } from '../../security/privileges.ts';
import { EVENT_LIST_PARAMS } from '../../services/event-list.ts';
import type { EventService } from '../../services/events.ts';
import { JOB_LIST_PARAMS } from '../../services/job-list.ts';
import type { JobService } from '../../services/jobs.ts';
import type { ListAnswer, ListParam } from '../../services/list-query.ts';
import { inboxParams, type MessageKind } from '../../services/messages.ts';
import { OBJECT_LIST_PARAMS, type ObjectService } from '../../services/objects.ts';
import type { MessageServices } from './message-routes.ts';
import { errorResponses, outputSchemaId } from './schemas.ts';

/**
 * The lists of the operator's console (docs/interfaces.md §2–§5): `GET /Job`, `GET /<Type>` for every definition
 * type of the registry, the inboxes `GET /OperatorMessage`, `/UserMessage`, `/Alert`, and `GET /Event`. One answer shape,
 * `{items, next}`, newest first (jobs, messages) or by business key (definitions), paged by an opaque cursor.
 */

interface ListRoute {
  /** The collection: `/Job`, `/Queue` … */
  name: string;
  /** Id of the schema of one item. */
  item: string;
  summary: string;
  order: string;
  params: readonly ListParam[];
  list(p: Principal, query: unknown): Promise<ListAnswer>;
}

export function registerListRoutes(
  app: FastifyInstance,
  deps: { objects: ObjectService; jobs: JobService; messages: MessageServices; events: EventService },
  served: Map<string, Set<string>>,
): void {
  const inboxes: Record<MessageKind, { summary: string; service: MessageServices['operator' | 'user' | 'alerts'] }> = {
    OperatorMessage: {
      summary: 'The operator messages the caller may view, newest first',
      service: deps.messages.operator,
    },
    UserMessage: {
      summary: 'The user messages the caller may answer (named a participant, with Reply), newest first',
      service: deps.messages.user,
    },
    Alert: { summary: 'The alerts the caller may view, newest first', service: deps.messages.alerts },
  };
  const routes: ListRoute[] = [
    {
      name: 'Job',
      item: 'Job',
      summary: 'List and search the jobs the caller may view, newest first',
      order: 'newest job first',
      params: JOB_LIST_PARAMS,
      list: (p, q) => deps.jobs.list(p, q),
    },
    ...definitionTypes().map((type) => ({
      name: type.name,
      item: outputSchemaId(type),
      summary: `List and search the ${type.name} objects the caller may view`,
      order: 'in business-key order',
      params: OBJECT_LIST_PARAMS,
      list: (p: Principal, q: unknown) => deps.objects.list(p, type, q),
    })),
    ...(Object.entries(inboxes) as Array<[MessageKind, (typeof inboxes)[MessageKind]]>).map(([kind, inbox]) => ({
      name: kind,
      item: kind,
      summary: inbox.summary,
      order: 'newest first',
      params: inboxParams(kind),
      list: (p: Principal, q: unknown) => inbox.service.list(p, q),
    })),
    {
      name: 'Event',
      item: 'Event',
      summary: 'List the events the caller may view (raised, pending and cleared), newest first',
      order: 'newest first',
      params: EVENT_LIST_PARAMS,
      list: (p, q) => deps.events.list(p, q),
    },
  ];
  for (const r of routes) {
    served.set(`/${r.name}`, new Set(['GET']));
    app.get<{ Querystring: unknown }>(`/${r.name}`, {
      schema: {
        tags: [r.name],
        summary: r.summary,
        querystring: querystring(r.params),
        response: { 200: page(r.item, r.order), ...errorResponses(400, 401) },
      },
      // Sent as text: the items are rendered already, and JSON.stringify of a page costs a fraction of what
      // the schema serialiser takes for 100 jobs (the schema documents the answer).
      handler: async (req, reply) =>
        reply.type('application/json; charset=utf-8').send(JSON.stringify(await r.list(req.principal, req.query))),
    });
  }
}

const querystring = (params: readonly ListParam[]) => ({
  type: 'object',
  properties: Object.fromEntries(
    params.map((p) => [p.name, { type: 'string', ...(p.schema ?? {}), description: p.description }]),
  ),
});

const page = (itemSchema: string, order: string) => ({
  type: 'object',
  description: `A page of the list, ${order}`,
  properties: {
    items: { type: 'array', items: { $ref: `${itemSchema}#` } },
    next: {
      type: 'string',
      nullable: true,
      description: 'Cursor of the next page (pass it as After); null on the last page',
    },
  },
  required: ['items', 'next'],
});
