import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_BULK_JOBS } from '../../domain/bulk.ts';
import { JOB_ACTIONS } from '../../domain/job-actions.ts';
import { requireForm } from '../../model/registry.ts';
import { BulkActions } from '../../services/job-bulk.ts';
import type { JobService } from '../../services/jobs.ts';
import { authorizeFirst, pathParams } from '../authorize-first.ts';
import { errorResponses } from './schemas.ts';

/**
 * Bulk actions (docs/architecture.md §6): `POST /Job/bulk/<action>` and the progress of an asynchronous one,
 * `GET /Job/bulk/requests/<RequestId>`. Beside the single actions: the same keys, error record and action table.
 */

const SKIPPED = {
  type: 'array',
  description: 'The jobs not acted on, each with the reason the single action would have given',
  items: {
    type: 'object',
    properties: { Job: { type: 'integer' }, Reason: { type: 'string' } },
    required: ['Job', 'Reason'],
  },
};
const ANSWER_FIELDS = {
  Matched: { type: 'integer', description: 'Jobs the Filter matched when the request started, or the JobIds given' },
  Done: { type: 'integer', description: 'Jobs acted on (a dry run: those that would be)' },
  Skipped: SKIPPED,
  DryRun: { type: 'boolean' },
};
const ANSWER = {
  type: 'object',
  description: 'What was done; a dry run says what would be done and changes nothing',
  properties: ANSWER_FIELDS,
  required: ['Matched', 'Done', 'Skipped', 'DryRun'],
};
const PROGRESS = {
  type: 'object',
  description:
    "A bulk request's progress, kept in the memory of the server node that runs it; once Done, with its answer",
  properties: {
    RequestId: { type: 'string' },
    Action: { type: 'string' },
    Status: { type: 'string', enum: ['Running', 'Done', 'Failed'] },
    Processed: { type: 'integer', description: 'Jobs acted on or skipped so far, of Matched' },
    Message: { type: 'string', description: 'Why it failed (Failed)' },
    ...ANSWER_FIELDS,
  },
  required: ['RequestId', 'Action', 'Status', 'Processed', 'Matched', 'Done', 'Skipped', 'DryRun'],
};

type Req = { Params: { action: string; requestId: string }; Body: unknown };

/** `POST /Job/bulk/submit` stays the submit of a definition named `bulk`, as `POST /Job/<definition>/submit` is. */
const SUBMIT = 'submit';

/**
 * Other methods on these paths are left to the job routes (`PUT /Job/<id>/<action>` and its 405s), as before: no
 * job has the id `bulk`.
 */
export function registerBulkRoutes(app: FastifyInstance, deps: { bulk: BulkActions; jobs: JobService }): void {
  const actionOf = (req: FastifyRequest) => pathParams(req).action ?? '';
  app.post<Req>('/Job/bulk/:action', {
    // The action is judged from the path before the body is read; privileges are judged job by job.
    preParsing: authorizeFirst((req) =>
      actionOf(req) === SUBMIT ? deps.jobs.authorizeSubmit(req.principal, 'bulk') : BulkActions.action(actionOf(req)),
    ),
    schema: {
      tags: ['Job'],
      summary: `Perform an action on many jobs, each as if alone (at most ${MAX_BULK_JOBS.toLocaleString('en')})`,
      description:
        "Any action of PUT /Job/<id>/<action> on the jobs a Filter of GET /Job matches (fixed when the request starts) or on the JobIds given. Each job gets its own privilege and status checks and its own history entry (cause bulk, naming the user); one that fails them is listed in Skipped with the single action's message. Async: true answers 202 with a RequestId to follow at GET /Job/bulk/requests/<RequestId>.",
      params: {
        type: 'object',
        properties: { action: { type: 'string', enum: [...JOB_ACTIONS] } },
        required: ['action'],
      },
      body: { $ref: `${requireForm('Job', 'bulk').id}#` },
      response: {
        200: ANSWER,
        202: PROGRESS,
        ...errorResponses(400, 401, 413, 415),
      },
    },
    handler: async (req, reply) => {
      if (actionOf(req) === SUBMIT)
        return reply.code(201).send(await deps.jobs.submit(req.principal, 'bulk', req.body));
      const { status, answer } = await deps.bulk.start(req.principal, actionOf(req), req.body);
      return reply.code(status).send(answer);
    },
  });
  app.get<Req>('/Job/bulk/requests/:requestId', {
    schema: {
      tags: ['Job'],
      summary: "An asynchronous bulk action's progress, and its answer once done",
      params: {
        type: 'object',
        properties: { requestId: { type: 'string', description: 'The RequestId its 202 answered' } },
        required: ['requestId'],
      },
      response: { 200: PROGRESS, ...errorResponses(401, 404) },
    },
    handler: (req) => deps.bulk.progress.read(req.principal, req.params.requestId),
  });
}
