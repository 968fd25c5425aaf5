import type { FastifyInstance } from 'fastify';
import type { Alerts } from '../../services/alerts.ts';
import type { MessageKind } from '../../services/messages.ts';
import type { OperatorMessages } from '../../services/operator-messages.ts';
import type { UserMessages } from '../../services/user-messages.ts';
import { errorResponses } from './schemas.ts';

export interface MessageServices {
  operator: OperatorMessages;
  user: UserMessages;
  alerts: Alerts;
}

type Req = { Params: { key: string }; Body: unknown };

const idParams = (what: string) => ({
  type: 'object',
  properties: { key: { type: 'string', description: `The ${what} id` } },
  required: ['key'],
});

/** The reply body of each kind (spec §2.4). */
const REPLY_BODIES: Record<MessageKind, { properties: Record<string, unknown>; required: string[]; summary: string }> = {
  OperatorMessage: {
    properties: { Reply: { type: 'string', maxLength: 1000 } },
    required: ['Reply'],
    summary: 'Reply to an operator message; the reply must match its ReplyExpression',
  },
  UserMessage: {
    properties: { Response: { type: 'string', maxLength: 255 }, ReplyComment: { type: 'string', maxLength: 1000 } },
    required: ['Response'],
    summary: 'Reply to a user message with one of its responses; only its participants may',
  },
  Alert: {
    properties: { Response: { type: 'string', maxLength: 1000 } },
    required: ['Response'],
    summary: 'Reply to an alert; Acknowledge stops its escalation',
  },
};

/** Spec §4 rows 14–16 (read and reply to operator messages, user messages and alerts) and 18–19. */
export function registerMessageRoutes(app: FastifyInstance, services: MessageServices, served: Map<string, Set<string>>): void {
  const byKind: Record<MessageKind, OperatorMessages | UserMessages | Alerts> = {
    OperatorMessage: services.operator,
    UserMessage: services.user,
    Alert: services.alerts,
  };
  for (const [kind, service] of Object.entries(byKind) as Array<[MessageKind, OperatorMessages | UserMessages | Alerts]>) {
    const tags = [kind];
    const params = idParams(kind);
    const out = { $ref: `${kind}#` };
    const body = REPLY_BODIES[kind];
    served.set(`/${kind}/:key`, new Set(['GET']));
    served.set(`/${kind}/:key/reply`, new Set(['PUT']));
    app.get<Req>(`/${kind}/:key`, {
      schema: { tags, summary: `Read a ${kind}`, params, response: { 200: out, ...errorResponses(401, 403, 404) } },
      handler: (req) => service.get(req.principal, req.params.key),
    });
    app.put<Req>(`/${kind}/:key/reply`, {
      schema: {
        tags,
        summary: body.summary,
        params,
        body: { type: 'object', properties: body.properties, required: body.required, additionalProperties: false },
        response: { 200: out, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
      handler: (req) => service.reply(req.principal, req.params.key, req.body),
    });
  }
  for (const type of ['ProcessServerAlertSource', 'JobDefinitionAlertSource'] as const)
    for (const action of ['enable', 'disable'] as const) {
      served.set(`/${type}/:key/${action}`, new Set(['PUT']));
      app.put<Req>(`/${type}/:key/${action}`, {
        schema: {
          tags: [type],
          summary: `${action === 'enable' ? 'Enable' : 'Disable'} the alert source (Control privilege)`,
          params: idParams(`${type} business key <partition>.<name>; a bare name means GLOBAL`),
          response: {
            200: {
              type: 'object',
              properties: { businessKey: { type: 'string' }, Enabled: { type: 'boolean' } },
              required: ['businessKey', 'Enabled'],
            },
            ...errorResponses(401, 403, 404),
          },
        },
        handler: (req) => services.alerts.setEnabled(req.principal, type, req.params.key, action === 'enable'),
      });
    }
}
