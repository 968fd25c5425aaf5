import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ActionBody, isJobAction, JOB_ACTIONS, type JobAction, jobAction } from '../../domain/job-actions.ts';
import { requireForm } from '../../model/registry.ts';
import { invalid } from '../../errors.ts';
import type { Principal } from '../../security/privileges.ts';
import type { JobActions } from '../../services/job-actions.ts';
import type { JobModify } from '../../services/job-modify.ts';
import type { BulkActions } from '../../services/job-bulk.ts';
import { selectFields } from '../../services/job-render.ts';
import type { JobService } from '../../services/jobs.ts';
import type { WaitingService } from '../../services/waiting.ts';
import {
  authorizeProcessServerAction,
  PROCESS_SERVER_ACTIONS,
  type ProcessServerAction,
} from '../../services/process-servers.ts';
import { authorizeFirst, pathParams } from '../authorize-first.ts';
import { sendJobFile, sendJobFileHead } from '../job-file-content.ts';
import { ACTION_BODY_DESCRIPTION, ACTIONS_DESCRIPTION, ACTIONS_SUMMARY } from './job-action-docs.ts';
import { errorResponses, formBody } from './schemas.ts';

export interface JobRouteDeps {
  jobs: JobService;
  actions: JobActions;
  /** PATCH /Job/<id>. */
  modify: JobModify;
  /** Actions on many jobs at once (bulk-routes.ts). */
  bulk: BulkActions;
  /** Why jobs wait (routes of waiting-routes.ts). */
  waiting: WaitingService;
  processServerAction(p: Principal, key: string, action: ProcessServerAction): Promise<void>;
  processServerText(p: Principal, key: string): Promise<string>;
}

const JOB = { $ref: 'Job#' };
const key = (description: string) => ({
  type: 'object',
  properties: { key: { type: 'string', description } },
  required: ['key'],
});
/** The Job's bodies are its forms in the registry (model/types/Job.ts); app.ts adds their schemas by these ids. */
const form = (name: ActionBody) => requireForm('Job', name);
const SUBMIT_BODY = { $ref: `${form('submit').id}#` };
/**
 * Resubmit: a submit body, or the body of GET /Job/<id> (the Job's other fields are accepted when unchanged, so
 * `additionalProperties` is true here; the service refuses a changed one, 400 naming it).
 */
const RESUBMIT_BODY = {
  ...formBody(form('submit')),
  title: 'JobResubmit',
  description:
    'Every field is optional. The body of GET /Job/<id> is accepted as is: the fields a submit does not set (Status, jobId, RunStart …) are ignored when unchanged and refused (400 naming them) when changed.',
  additionalProperties: true,
};
/**
 * One route takes every action; its body is the form the action table names (resubmit: a submit body, as PUT
 * /Job/<id>). The document gives the union, and each action's line in the description says which it takes.
 */
const ACTION_BODY = {
  description: `${ACTION_BODY_DESCRIPTION} ${JOB_ACTIONS.filter((a) => jobAction(a).body !== 'properties')
    .map((a) => `${a} takes ${form(jobAction(a).body).id}.`)
    .join(' ')}`,
  anyOf: (['properties', 'completion', 'comment', 'submit'] as const).map((b) => ({ $ref: `${form(b).id}#` })),
};

const HISTORY = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          Time: { type: 'string', example: '2026/11/21 09:30:00,000 Europe/Amsterdam' },
          FromStatus: { type: 'string', nullable: true, description: 'Null for the job being created' },
          ToStatus: { type: 'string' },
          User: { type: 'string', nullable: true, description: 'The user whose action caused it; null: the engine' },
          Cause: {
            type: 'string',
            description:
              "The user's action (submit, hold, release, cancel, …) or the engine's reason (dispatch, agent, …)",
          },
          Detail: { type: 'string', nullable: true, example: 'Process server GLOBAL.Local reported return code 0' },
        },
      },
    },
  },
};
const ACTION_QUERY = {
  type: 'object',
  properties: {
    cancelRecurrence: {
      type: 'string',
      enum: ['true', 'false'],
      description: 'cancel: true also ends the recurrence the job belongs to',
    },
  },
};
const FIELDS_QUERY = {
  type: 'object',
  properties: { fields: { type: 'string', description: 'Comma-separated fields to return, e.g. jobId,uniqueId' } },
};

type Req = { Params: { key: string; action?: string }; Body: unknown; Querystring: Record<string, string> };

const keyOf = (req: FastifyRequest) => pathParams(req).key ?? '';

/** The action named in the path; 400 for one the table does not have (judged from the path, before the body). */
function actionOf(req: FastifyRequest): JobAction {
  const action = pathParams(req).action ?? '';
  if (!isJobAction(action)) throw invalid(`Unknown action "${action}"; one of ${JOB_ACTIONS.join(', ')}`);
  return action;
}

function submitActionOf(req: FastifyRequest): void {
  const action = pathParams(req).action;
  if (action !== 'submit') throw invalid(`Unknown action "${action}"; POST takes submit`);
}

function processServerActionOf(req: FastifyRequest): ProcessServerAction {
  const action = pathParams(req).action as ProcessServerAction;
  if (!PROCESS_SERVER_ACTIONS.includes(action))
    throw invalid(`Unknown action "${pathParams(req).action}"; one of start, stop, restart`);
  return action;
}

/** Jobs (docs/interfaces.md §3): submit, read, actions, files, history; process servers' start, stop, restart. */
export function registerJobRoutes(app: FastifyInstance, deps: JobRouteDeps, served: Map<string, Set<string>>): void {
  served.set('/Job/:key', new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']));
  served.set('/Job/:key/:action', new Set(['POST', 'PUT']));
  served.set('/Job/:key/history', new Set(['GET']));
  served.set('/JobFile/:key/content', new Set(['GET']));
  served.set('/ProcessServer/:key/:action', new Set(['PUT']));
  // In this order: the description document lists the paths as they were registered.
  registerSubmitRoutes(app, deps);
  registerJobReadRoutes(app, deps);
  registerJobActionRoutes(app, deps);
  registerJobFileRoutes(app, deps);
  registerProcessServerRoutes(app, deps);
}

const JOB_KEY = key('The numeric jobId');

/** POST /Job/<definition> and its spelling with the `submit` action. */
function registerSubmitRoutes(app: FastifyInstance, deps: JobRouteDeps): void {
  const submit = async (req: FastifyRequest<Req>, reply: FastifyReply) =>
    reply
      .code(201)
      .send(selectFields(await deps.jobs.submit(req.principal, req.params.key, req.body), req.query.fields));

  const authorizeSubmit = authorizeFirst((req) => deps.jobs.authorizeSubmit(req.principal, keyOf(req)));
  app.post<Req>('/Job/:key', {
    preParsing: authorizeSubmit,
    schema: {
      tags: ['Job'],
      summary: 'Submit a job of the definition <partition>.<name>',
      params: key('The definition `<partition>.<name>`; a bare name means GLOBAL'),
      querystring: FIELDS_QUERY,
      body: SUBMIT_BODY,
      response: { 201: JOB, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req, reply) => submit(req, reply),
  });
  app.post<Req>('/Job/:key/:action', {
    preParsing: authorizeFirst((req) => {
      submitActionOf(req);
      return deps.jobs.authorizeSubmit(req.principal, keyOf(req));
    }),
    schema: {
      tags: ['Job'],
      summary: 'Submit a job (the action must be `submit`)',
      params: {
        type: 'object',
        properties: { key: { type: 'string' }, action: { type: 'string', enum: ['submit'] } },
        required: ['key', 'action'],
      },
      querystring: FIELDS_QUERY,
      body: SUBMIT_BODY,
      response: { 201: JOB, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req, reply) => {
      submitActionOf(req);
      return submit(req, reply);
    },
  });
}

/** A job and its history. */
function registerJobReadRoutes(app: FastifyInstance, deps: JobRouteDeps): void {
  app.get<Req>('/Job/:key', {
    schema: {
      tags: ['Job'],
      summary: 'Read a job',
      params: JOB_KEY,
      response: { 200: JOB, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => deps.jobs.get(req.principal, req.params.key),
  });
  app.get<Req>('/Job/:key/history', {
    schema: {
      tags: ['Job'],
      summary: "A job's status changes, oldest first, each with its time and cause",
      params: JOB_KEY,
      response: { 200: HISTORY, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => deps.jobs.history(req.principal, req.params.key),
  });
}

/** Resubmit, every action of the table, and delete. */
function registerJobActionRoutes(app: FastifyInstance, deps: JobRouteDeps): void {
  const act = async (req: FastifyRequest<Req>, reply: FastifyReply, action: JobAction) => {
    const { job, created } = await deps.actions.act(req.principal, req.params.key, action, req.body, req.query);
    return reply.code(created ? 201 : 200).send(job);
  };
  app.put<Req>('/Job/:key', {
    preParsing: authorizeFirst((req) => deps.actions.authorize(req.principal, keyOf(req), 'resubmit')),
    schema: {
      tags: ['Job'],
      summary: 'Resubmit: a new job copied from this one, with the body applied',
      params: JOB_KEY,
      body: RESUBMIT_BODY,
      response: { 201: JOB, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req, reply) => act(req, reply, 'resubmit'),
  });
  app.put<Req>('/Job/:key/:action', {
    preParsing: authorizeFirst((req) => deps.actions.authorize(req.principal, keyOf(req), actionOf(req))),
    schema: {
      tags: ['Job'],
      summary: ACTIONS_SUMMARY,
      description: ACTIONS_DESCRIPTION,
      params: {
        type: 'object',
        properties: { key: { type: 'string' }, action: { type: 'string', enum: [...JOB_ACTIONS] } },
        required: ['key', 'action'],
      },
      querystring: ACTION_QUERY,
      body: ACTION_BODY,
      response: { 200: JOB, 201: JOB, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req, reply) => act(req, reply, actionOf(req)),
  });
  app.patch<Req>('/Job/:key', {
    preParsing: authorizeFirst((req) => deps.modify.authorize(req.principal, keyOf(req))),
    schema: {
      tags: ['Job'],
      summary: 'Change a job before it starts: its start, queue, priority, description or In values',
      description:
        'Applies to a job that has not been handed to a process server (Scheduled, Queued, Held, EventWait, LockWait, Chained …); later 409 and nothing changes. Each change is kept in the job’s history with the user. The answer is the job as GET renders it.',
      params: JOB_KEY,
      body: { $ref: `${requireForm('Job', 'modify').id}#` },
      response: { 200: JOB, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => deps.modify.modify(req.principal, req.params.key, req.body),
  });
  app.delete<Req>('/Job/:key', {
    preParsing: authorizeFirst((req) => deps.actions.authorize(req.principal, keyOf(req), 'delete')),
    schema: {
      tags: ['Job'],
      summary: 'Delete a job in a final status, with its files',
      params: JOB_KEY,
      response: { 204: { type: 'null', description: 'Deleted; no body' }, ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => {
      await deps.actions.delete(req.principal, req.params.key);
      return reply.code(204).send();
    },
  });
}

/** A job file's contents, whole or by range, and its HEAD. */
function registerJobFileRoutes(app: FastifyInstance, deps: JobRouteDeps): void {
  app.get<Req>('/JobFile/:key/content', {
    schema: {
      tags: ['JobFile'],
      summary: "Contents of a job file; supports Range, so a running job's output can be followed",
      params: key('The uniqueId of the job file'),
      response: {
        200: { description: 'The file', type: 'string' },
        206: { description: 'The requested range', type: 'string' },
        ...errorResponses(401, 403, 404, 416),
      },
    },
    // HEAD is its own route below: Fastify's own would stream the whole file to find its length.
    exposeHeadRoute: false,
    handler: async (req, reply) =>
      sendJobFile(req, reply, await deps.jobs.file(req.principal, req.params.key), deps.jobs),
  });
  app.head<Req>('/JobFile/:key/content', {
    schema: { hide: true },
    handler: async (req, reply) => sendJobFileHead(reply, await deps.jobs.file(req.principal, req.params.key)),
  });
}

/** A process server's start, stop and restart. */
function registerProcessServerRoutes(app: FastifyInstance, deps: JobRouteDeps): void {
  app.put<Req>('/ProcessServer/:key/:action', {
    preParsing: authorizeFirst((req) =>
      authorizeProcessServerAction(req.principal, keyOf(req), processServerActionOf(req)),
    ),
    schema: {
      tags: ['ProcessServer'],
      summary: 'Start, stop or restart a process server',
      params: {
        type: 'object',
        properties: { key: { type: 'string' }, action: { type: 'string', enum: [...PROCESS_SERVER_ACTIONS] } },
        required: ['key', 'action'],
      },
      response: { 200: { $ref: 'ProcessServer#' }, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: async (req, reply) => {
      const action = processServerActionOf(req);
      await deps.processServerAction(req.principal, req.params.key, action);
      return reply
        .type('application/json; charset=utf-8')
        .send(await deps.processServerText(req.principal, req.params.key));
    },
  });
}
