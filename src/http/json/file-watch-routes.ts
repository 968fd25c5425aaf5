import type { FastifyInstance } from 'fastify';
import type { FileWatchStatus } from '../../services/file-watch-status.ts';
import { errorResponses } from './schemas.ts';

/** `GET /ProcessServer/<key>/filewatches`: its agent's file watches and how they do (docs/architecture.md §7b). */
export function registerFileWatchRoutes(
  app: FastifyInstance,
  fileWatches: FileWatchStatus,
  served: Map<string, Set<string>>,
): void {
  served.set('/ProcessServer/:key/filewatches', new Set(['GET']));
  const nullable = (type: string, description: string) => ({ type: [type, 'null'], description });
  app.get<{ Params: { key: string } }>('/ProcessServer/:key/filewatches', {
    schema: {
      tags: ['ProcessServer'],
      summary: "The enabled FileEvents of every event definition naming this process server, with its agent's report",
      params: {
        type: 'object',
        properties: {
          key: { type: 'string', description: 'Business key `<partition>.<name>`; a bare name means GLOBAL' },
        },
        required: ['key'],
      },
      response: {
        200: {
          type: 'object',
          properties: {
            items: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  EventDefinition: { type: 'string', description: 'The definition the files raise' },
                  Directory: { type: 'string' },
                  Pattern: { type: 'string' },
                  LastPoll: nullable('string', 'When the agent last read the folder (server time zone)'),
                  FilesSeen: { type: 'integer', description: 'Files raised since the agent started' },
                  LastError: nullable('string', 'Why the last look failed, or a file could not be moved'),
                },
                required: ['EventDefinition', 'Directory', 'Pattern', 'LastPoll', 'FilesSeen', 'LastError'],
                additionalProperties: false,
              },
            },
          },
          required: ['items'],
          additionalProperties: false,
        },
        ...errorResponses(401, 403, 404),
      },
    },
    handler: (req) => fileWatches.list(req.principal, req.params.key),
  });
}
