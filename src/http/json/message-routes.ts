import type { FastifyInstance } from 'fastify';
import type { Alerts } from '../../services/alerts.ts';
import { requireForm, requireType } from '../../model/registry.ts';
import type { MessageKind } from '../../services/messages.ts';
import type { ObjectService } from '../../services/objects.ts';
import type { OperatorMessages } from '../../services/operator-messages.ts';
import type { UserMessages } from '../../services/user-messages.ts';
import { authorizeFirst, pathParams } from '../authorize-first.ts';
import { errorResponses, outputSchemaId } from './schemas.ts';

export interface MessageServices {
  operator: OperatorMessages;
  user: UserMessages;
  alerts: Alerts;
  /** Alert sources are switched like other objects are changed (key parsing, privileges, rendering). */
  objects: ObjectService;
}

type Req = { Params: { key: string }; Body: unknown };

const idParams = (what: string) => ({
  type: 'object',
  properties: { key: { type: 'string', description: `The ${what} id` } },
  required: ['key'],
});

const SOURCE_PARAMS = {
  type: 'object',
  properties: { key: { type: 'string', description: 'Business key `<partition>.<name>`; a bare name means GLOBAL' } },
  required: ['key'],
};

/** The reply body of each kind. */
const REPLY_SUMMARIES: Record<MessageKind, string> = {
  OperatorMessage: 'Reply to an operator message; the reply must match its ReplyExpression',
  UserMessage: 'Reply to a user message with one of its responses; only its participants may',
  Alert: 'Reply to an alert; Acknowledge stops its escalation',
};

/** Read and reply to operator messages, user messages and alerts; alert sources on and off (docs/interfaces.md §5). */
export function registerMessageRoutes(
  app: FastifyInstance,
  services: MessageServices,
  served: Map<string, Set<string>>,
): void {
  const byKind: Record<MessageKind, OperatorMessages | UserMessages | Alerts> = {
    OperatorMessage: services.operator,
    UserMessage: services.user,
    Alert: services.alerts,
  };
  for (const [kind, service] of Object.entries(byKind) as Array<
    [MessageKind, OperatorMessages | UserMessages | Alerts]
  >) {
    const tags = [kind];
    const params = idParams(kind);
    const out = { $ref: `${kind}#` };
    served.set(`/${kind}/:key`, new Set(['GET']));
    served.set(`/${kind}/:key/reply`, new Set(['PUT']));
    app.get<Req>(`/${kind}/:key`, {
      schema: { tags, summary: `Read a ${kind}`, params, response: { 200: out, ...errorResponses(401, 403, 404) } },
      handler: (req) => service.get(req.principal, req.params.key),
    });
    app.put<Req>(`/${kind}/:key/reply`, {
      preParsing: authorizeFirst((req) => service.authorizeReply(req.principal, pathParams(req).key ?? '')),
      schema: {
        tags,
        summary: REPLY_SUMMARIES[kind],
        params,
        // The kind's reply form in the registry (model/types/<kind>.ts); app.ts adds its schema by id.
        body: { $ref: `${requireForm(kind, 'reply').id}#` },
        response: { 200: out, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
      handler: (req) => service.reply(req.principal, req.params.key, req.body),
    });
  }
  for (const name of ['ProcessServerAlertSource', 'JobDefinitionAlertSource'] as const) {
    const type = requireType(name);
    for (const action of ['enable', 'disable'] as const) {
      served.set(`/${name}/:key/${action}`, new Set(['PUT']));
      app.put<Req>(`/${name}/:key/${action}`, {
        preParsing: authorizeFirst((req) =>
          services.objects.authorizeChange(req.principal, type, pathParams(req).key ?? '', 'Control', action),
        ),
        schema: {
          tags: [name],
          summary: `${action === 'enable' ? 'Enable' : 'Disable'} the alert source (Control privilege)`,
          params: SOURCE_PARAMS,
          response: { 200: { $ref: `${outputSchemaId(type)}#` }, ...errorResponses(401, 403, 404) },
        },
        handler: (req) => services.objects.setEnabled(req.principal, type, req.params.key, action === 'enable'),
      });
    }
  }
}
