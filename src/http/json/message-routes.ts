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
  registerOperatorMessageDelete(app, services.operator, served);
  registerUserMessageHandOver(app, services.user, served);
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

/** `DELETE /OperatorMessage/<id>`: a Replied or NotRequired message (Delete privilege); 409 while it waits. */
function registerOperatorMessageDelete(
  app: FastifyInstance,
  operator: OperatorMessages,
  served: Map<string, Set<string>>,
): void {
  served.get('/OperatorMessage/:key')?.add('DELETE');
  app.delete<Req>('/OperatorMessage/:key', {
    preParsing: authorizeFirst((req) => operator.authorizeDelete(req.principal, pathParams(req).key ?? '')),
    schema: {
      tags: ['OperatorMessage'],
      summary: 'Delete an operator message that is Replied or NotRequired (409 while it waits for a reply)',
      params: idParams('OperatorMessage'),
      response: { 204: { type: 'null', description: 'Deleted; no body' }, ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => {
      await operator.delete(req.principal, req.params.key);
      return reply.code(204).send();
    },
  });
}

const HAND_OVER_SUMMARIES = {
  forward: 'Forward a user message: the users and roles of To become participants (only a participant may)',
  delegate: "Delegate a user message: those of To may reply in the caller's place (only a participant may)",
} as const;

/** `PUT /UserMessage/<id>/forward` and `/delegate` (services/user-message-handover.ts). */
function registerUserMessageHandOver(app: FastifyInstance, user: UserMessages, served: Map<string, Set<string>>): void {
  for (const kind of ['forward', 'delegate'] as const) {
    served.set(`/UserMessage/:key/${kind}`, new Set(['PUT']));
    app.put<Req>(`/UserMessage/:key/${kind}`, {
      preParsing: authorizeFirst((req) => user.authorizeHandOver(req.principal, pathParams(req).key ?? '', kind)),
      schema: {
        tags: ['UserMessage'],
        summary: HAND_OVER_SUMMARIES[kind],
        params: idParams('UserMessage'),
        // The UserMessage's forms in the registry (model/types/UserMessage.ts); app.ts adds their schemas by id.
        body: { $ref: `${requireForm('UserMessage', kind).id}#` },
        response: { 200: { $ref: 'UserMessage#' }, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
      handler: (req) => user.handOver(req.principal, req.params.key, kind, req.body),
    });
  }
}
