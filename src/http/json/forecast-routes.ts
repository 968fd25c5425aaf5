import type { FastifyInstance } from 'fastify';
import { FORECAST_PARAMS, type ForecastService } from '../../services/forecast.ts';
import { errorResponses } from './schemas.ts';

const DATE = { type: 'string', description: 'YYYY/MM/DD HH:MM:SS,mmm Zone' };

const ITEM = {
  type: 'object',
  description: 'One start the scheduler will make, assuming room in its queue and on a process server',
  properties: {
    Start: {
      ...DATE,
      description: "When the job starts: its occurrence, or later when a time window is closed then (the job's zone)",
    },
    JobDefinition: { type: 'string', description: 'Business key of the definition' },
    Source: {
      type: 'string',
      enum: ['Recurrence', 'Scheduled'],
      description: "Recurrence: a start of a SubmitFrame's series; Scheduled: a single job waiting for its start",
    },
    Job: { type: 'integer', description: "The waiting job (for a recurrence's later starts: the job that waits now)" },
    JobGroup: { type: 'integer', nullable: true, description: "The recurrence's JobGroup" },
    Queue: { type: 'string', description: 'Business key of the queue' },
    TimeWindow: { type: 'string', nullable: true, description: "The job's own time window" },
  },
  required: ['Start', 'JobDefinition', 'Source', 'Job', 'JobGroup', 'Queue', 'TimeWindow'],
};

/** `GET /forecast`: the planned starts in a range, in order of Start, paged like the lists. */
export function registerForecastRoute(
  app: FastifyInstance,
  forecast: ForecastService,
  served: Map<string, Set<string>>,
): void {
  served.set('/forecast', new Set(['GET']));
  app.get<{ Querystring: unknown }>('/forecast', {
    schema: {
      tags: ['Job'],
      summary: 'The starts the scheduler will make in a range (at most 366 days), in order of Start',
      querystring: {
        type: 'object',
        properties: Object.fromEntries(
          FORECAST_PARAMS.map((p) => [p.name, { type: 'string', ...(p.schema ?? {}), description: p.description }]),
        ),
        required: ['From', 'Until'],
      },
      response: {
        200: {
          type: 'object',
          properties: {
            items: { type: 'array', items: ITEM },
            next: {
              type: 'string',
              nullable: true,
              description: 'Cursor of the next page (pass it as After); null on the last page',
            },
          },
          required: ['items', 'next'],
        },
        ...errorResponses(400, 401),
      },
    },
    handler: async (req, reply) =>
      reply.type('application/json; charset=utf-8').send(JSON.stringify(await forecast.page(req.principal, req.query))),
  });
}
