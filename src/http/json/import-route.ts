import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { invalid, MillraceError } from '../../errors.ts';
import type { ImportService } from '../../services/car-import.ts';
import { holdForRequest, releaseForRequest } from '../../services/import-gate.ts';
import type { JobService } from '../../services/jobs.ts';
import { requireType } from '../../model/registry.ts';
import { ARCHIVE_BODY_LIMIT } from '../xml/routes.ts';
import { authorizeFirst } from '../authorize-first.ts';
import { errorResponses, outputSchemaId } from './schemas.ts';

type ImportQuery = { TargetPartition?: string; WaitForCompletion?: string; ImportRuleSet?: string; fileName?: string };

const QUERY = new Set(['TargetPartition', 'WaitForCompletion', 'ImportRuleSet', 'fileName']);

/**
 * `POST /Import` (docs/interfaces.md §6) with the CAR file as the body. The answer is the System_Import_Archive job
 * that does the import (GET /Job/<jobId> follows it). WaitForCompletion=true waits for it: 200 when it completed,
 * 500 when it failed; false answers 200 once it is submitted. An archive that cannot
 * be imported at all (not a CAR, unsafe, too large when inflated, untrusted) is refused before any job exists:
 * with WaitForCompletion=true that is a failed import too, so 500 with the reason; otherwise 413 or 422.
 */
export async function registerImportRoute(
  app: FastifyInstance,
  imports: ImportService,
  jobs: JobService,
  served: Map<string, Set<string>>,
): Promise<void> {
  served.set('/Import', new Set(['POST']));
  // Its own scope: only this route takes binary bodies; every other JSON route still answers 415 to them.
  const plugin: FastifyPluginAsync = async (scope) => importRoute(scope, imports, jobs);
  await app.register(plugin);
}

function importRoute(app: FastifyInstance, imports: ImportService, jobs: JobService): void {
  for (const type of ['application/octet-stream', 'application/zip', 'application/java-archive'])
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.post<{ Querystring: ImportQuery }>('/Import', {
    bodyLimit: ARCHIVE_BODY_LIMIT,
    // The right to import, then an import slot, before the body is read: the slot is the global bound on import
    // memory, and a caller who may not import waits for none.
    preParsing: [
      authorizeFirst((req) => imports.authorize(req.principal)),
      async (req, reply) => holdForRequest(imports.gate, req.raw, (release) => reply.raw.once('close', release)),
    ],
    schema: {
      tags: ['Import'],
      summary: 'Import a CAR file',
      consumes: ['application/octet-stream'],
      querystring: {
        type: 'object',
        properties: {
          TargetPartition: { type: 'string', description: 'partition to import into' },
          WaitForCompletion: {
            type: 'string',
            enum: ['true', 'false'],
            description: 'true: answer when the import ended',
          },
          ImportRuleSet: { type: 'string', description: 'import rule set, <PARTITION>.<Name>' },
          fileName: { type: 'string', description: 'file name of the CAR file, for the log' },
        },
      },
      response: {
        200: { $ref: `${outputSchemaId(requireType('Job'))}#` },
        ...errorResponses(400, 401, 403, 413, 415, 422, 500),
      },
    },
    handler: async (req: FastifyRequest<{ Querystring: ImportQuery }>, reply) => {
      const q = req.query;
      for (const k of Object.keys(q)) if (!QUERY.has(k)) throw invalid(`Unknown query parameter "${k}"`);
      const wait = q.WaitForCompletion ?? 'false';
      if (wait !== 'true' && wait !== 'false') throw invalid('WaitForCompletion must be true or false');
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const job = await imports
        .start(req.principal, body, {
          ...(q.TargetPartition !== undefined ? { targetPartition: q.TargetPartition } : {}),
          ...(q.ImportRuleSet !== undefined ? { ruleSet: q.ImportRuleSet } : {}),
          ...(q.fileName !== undefined ? { fileName: q.fileName } : {}),
        })
        .catch((err: unknown) => {
          if (wait === 'true' && err instanceof MillraceError && (err.status === 422 || err.status === 413))
            throw new MillraceError(500, 'IMPORT_FAILED', `Import failed: ${err.message}`);
          throw err;
        });
      releaseForRequest(req.raw);
      if (wait === 'false') return reply.code(200).send(await jobs.get(req.principal, String(job.jobId)));
      const ended = await imports.waitForEnd(job.jobId);
      if (ended.status !== 'Completed')
        throw new MillraceError(
          500,
          'IMPORT_FAILED',
          `Import job ${ended.jobId} ended ${ended.status}: ${ended.data.notes.at(-1) ?? ''}`,
        );
      return reply.code(200).send(await jobs.get(req.principal, String(ended.jobId)));
    },
  });
}
