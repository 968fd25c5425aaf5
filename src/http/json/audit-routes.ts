import type { FastifyInstance } from 'fastify';
import { AUDIT_PARAMS, type AuditService } from '../../services/audit.ts';
import { authorizeFirst } from '../authorize-first.ts';
import { errorResponses } from './schemas.ts';

const DIFF_ITEM = {
  type: 'object',
  properties: {
    Field: { type: 'string' },
    Before: { description: 'The value before the change (secrets shown as ***); null when absent' },
    After: { description: 'The value after the change (secrets shown as ***); null when absent' },
  },
  required: ['Field', 'Before', 'After'],
};

const ENTRY = {
  type: 'object',
  description: 'One change, sign-in or action in the audit log (docs/architecture.md §18)',
  properties: {
    Id: { type: 'integer' },
    Time: { type: 'string', description: 'YYYY/MM/DD HH:MM:SS,mmm Zone' },
    User: { type: 'string', description: 'The actor: a user, or system for the server itself' },
    ApiKeyId: { type: 'string', nullable: true, description: 'The id of the API key used (never the key)' },
    Address: { type: 'string', nullable: true, description: "The client's address" },
    Interface: { type: 'string', enum: ['json', 'xml', 'cli', 'console', 'system'] },
    Action: { type: 'string' },
    ObjectType: { type: 'string', nullable: true },
    ObjectKey: { type: 'string', nullable: true },
    ObjectUniqueId: { type: 'integer', nullable: true },
    Detail: { type: 'string', nullable: true },
    Changes: { type: 'array', items: DIFF_ITEM, description: 'Field-level difference, before and after' },
    Restorable: { type: 'boolean', description: 'Whether POST …/restore can put the object back from this entry' },
    PreviousHash: { type: 'string', description: 'The hash of the entry before (the chain)' },
    Hash: { type: 'string', description: "sha256 over PreviousHash and this entry's canonical JSON" },
  },
  required: ['Id', 'Time', 'User', 'Interface', 'Action', 'Changes', 'Restorable', 'PreviousHash', 'Hash'],
};

const ID_PARAMS = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };

/** `GET /AuditEntry`, `GET /AuditEntry/<id>` and `POST /AuditEntry/<id>/restore`: the Auditor role or administrators. */
export function registerAuditRoutes(app: FastifyInstance, audit: AuditService, served: Map<string, Set<string>>): void {
  const tags = ['AuditEntry'];
  served.set('/AuditEntry', new Set(['GET']));
  app.get<{ Querystring: unknown }>('/AuditEntry', {
    schema: {
      tags,
      summary: 'The audit log, newest first, filtered and keyset-paged (Auditor role or administrators)',
      querystring: {
        type: 'object',
        properties: Object.fromEntries(
          AUDIT_PARAMS.map((p) => [p.name, { type: 'string', ...(p.schema ?? {}), description: p.description }]),
        ),
      },
      response: {
        200: {
          type: 'object',
          properties: {
            items: { type: 'array', items: ENTRY },
            next: { type: 'string', nullable: true, description: 'Cursor of the next page (pass it as After)' },
          },
          required: ['items', 'next'],
        },
        ...errorResponses(400, 401, 403),
      },
    },
    handler: async (req, reply) =>
      reply.type('application/json; charset=utf-8').send(JSON.stringify(await audit.page(req.principal, req.query))),
  });
  served.set('/AuditEntry/:id', new Set(['GET']));
  app.get<{ Params: { id: string } }>('/AuditEntry/:id', {
    schema: {
      tags,
      summary: 'One audit entry',
      params: ID_PARAMS,
      response: { 200: ENTRY, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => audit.get(req.principal, req.params.id),
  });
  served.set('/AuditEntry/:id/restore', new Set(['POST']));
  app.post<{ Params: { id: string } }>('/AuditEntry/:id/restore', {
    preParsing: authorizeFirst((req) => audit.authorize(req.principal)),
    schema: {
      tags,
      summary:
        'Recreate the deleted object, or put back the before side of the change, of this entry (itself audited); 409 when the object changed since',
      params: ID_PARAMS,
      response: {
        200: { type: 'object', description: 'The object as it is after the restore', additionalProperties: true },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    handler: (req) => audit.restore(req.principal, req.params.id),
  });
}
