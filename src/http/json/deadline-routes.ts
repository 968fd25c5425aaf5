import type { FastifyInstance } from 'fastify';
import { DEADLINE_ALERT_KINDS, DEADLINE_STATES } from '../../domain/deadline.ts';
import type { DeadlineService } from '../../services/deadlines.ts';
import { errorResponses } from './schemas.ts';

const DATE = { type: 'string', description: 'YYYY/MM/DD HH:MM:SS,mmm Zone' };

const ITEM = {
  type: 'object',
  description: "A deadline today and its run's state",
  properties: {
    Deadline: { type: 'string', description: 'Business key of the Deadline' },
    Description: { type: 'string', nullable: true },
    JobDefinition: { type: 'string', description: 'Business key of the definition or chain it watches' },
    EndBy: { ...DATE, description: "Today's EndBy, in the deadline's zone" },
    LeadMinutes: { type: 'integer' },
    Applies: { type: 'boolean', description: 'Whether its TimeWindow lets it apply today' },
    State: {
      type: 'string',
      enum: [...DEADLINE_STATES],
      description:
        'OnTime, AtRisk (estimated end later than EndBy − LeadMinutes), Missed, Met (ended Completed in time), ' +
        'Ended (ended otherwise, in time), NoRun (no run of today yet), NotToday (its window excludes today)',
    },
    Job: { type: 'integer', nullable: true, description: "Today's run: the newest whose deadline is today's EndBy" },
    JobStatus: { type: 'string', nullable: true },
    EstimatedEnd: {
      ...DATE,
      nullable: true,
      description: 'Estimated end on the P95 basis while it runs or waits; its end once it ended',
    },
    Alerts: { type: 'array', items: { type: 'string', enum: [...DEADLINE_ALERT_KINDS] } },
  },
  required: [
    'Deadline',
    'Description',
    'JobDefinition',
    'EndBy',
    'LeadMinutes',
    'Applies',
    'State',
    'Job',
    'JobStatus',
    'EstimatedEnd',
    'Alerts',
  ],
};

/** `GET /deadlines`: today's deadlines with their state (the Deadlines page). */
export function registerDeadlineRoutes(
  app: FastifyInstance,
  deadlines: DeadlineService,
  served: Map<string, Set<string>>,
): void {
  served.set('/deadlines', new Set(['GET']));
  app.get('/deadlines', {
    schema: {
      tags: ['Deadline'],
      summary: "Today's deadlines (those the caller may view, with its definition's jobs), in order of EndBy",
      response: {
        200: {
          type: 'object',
          properties: { Time: { ...DATE, description: 'Now' }, Deadlines: { type: 'array', items: ITEM } },
          required: ['Time', 'Deadlines'],
        },
        ...errorResponses(401),
      },
    },
    handler: async (req, reply) =>
      reply.type('application/json; charset=utf-8').send(JSON.stringify(await deadlines.today(req.principal))),
  });
}
