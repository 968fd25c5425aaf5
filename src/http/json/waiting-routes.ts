import type { FastifyInstance } from 'fastify';
import { MAX_WAITING_BATCH, type WaitingService } from '../../services/waiting.ts';
import { errorResponses } from './schemas.ts';

const CODES = [
  'ScheduledStart',
  'Hold',
  'QueueHeld',
  'QueueFull',
  'HoldLevel',
  'TimeWindowClosed',
  'NoProcessServer',
  'ProcessServerStopped',
  'AgentDisconnected',
  'ProcessServerFull',
  'EventWait',
  'LockWait',
  'ChainPredecessor',
];

const REASON = {
  type: 'object',
  properties: {
    Code: { type: 'string', enum: CODES },
    Message: { type: 'string', example: 'No process server serving Queue:GLOBAL.Default runs UserMessage jobs.' },
    Object: {
      type: 'string',
      nullable: true,
      description: 'What it waits on, `Type:key` (Queue:GLOBAL.Default, ProcessServer:GLOBAL.Local, Job:12, Lock:…)',
      example: 'Queue:GLOBAL.Default',
    },
    Until: {
      type: 'string',
      nullable: true,
      description: 'When the wait ends by itself (a start time, a time window opening); null when nothing says',
      example: '2026/12/24 06:00:00,000 Europe/Amsterdam',
    },
  },
  required: ['Code', 'Message', 'Object', 'Until'],
};

const WAITING = {
  type: 'object',
  properties: {
    Status: { type: 'string', description: "The job's status", example: 'Queued' },
    Reasons: {
      type: 'array',
      items: REASON,
      description: 'Every check of the engine the job fails now; empty when it does not wait',
    },
  },
  required: ['Status', 'Reasons'],
};

const BATCH = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        ...WAITING,
        properties: { Job: { type: 'integer' }, ...WAITING.properties },
        required: ['Job', 'Status', 'Reasons'],
      },
    },
  },
  required: ['items'],
};

type Req = { Params: { key: string }; Querystring: unknown };

/** Why a job waits (docs/architecture.md §8): one job, or a page of the job list at once. */
export function registerWaitingRoutes(
  app: FastifyInstance,
  waiting: WaitingService,
  served: Map<string, Set<string>>,
): void {
  served.set('/Job/:key/waiting', new Set(['GET']));
  served.set('/waiting', new Set(['GET']));
  app.get<Req>('/Job/:key/waiting', {
    schema: {
      tags: ['Job'],
      summary: 'Why the job waits: each check of the dispatcher it fails now, in words',
      params: {
        type: 'object',
        properties: { key: { type: 'string', description: 'The numeric jobId' } },
        required: ['key'],
      },
      response: { 200: WAITING, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => waiting.one(req.principal, req.params.key),
  });
  app.get<Req>('/waiting', {
    schema: {
      tags: ['Job'],
      summary: 'Why each of several jobs waits (the jobs the caller may view; the others are left out)',
      querystring: {
        type: 'object',
        properties: {
          Jobs: {
            type: 'string',
            description: `1 to ${MAX_WAITING_BATCH} job ids, comma-separated`,
            example: '12,13,14',
          },
        },
        required: ['Jobs'],
      },
      response: { 200: BATCH, ...errorResponses(400, 401) },
    },
    handler: (req) => waiting.many(req.principal, req.query),
  });
}
