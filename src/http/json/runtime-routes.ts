import type { FastifyInstance } from 'fastify';
import { LAST_RUNS, type RuntimeAnswers } from '../../services/runtime-answers.ts';
import { errorResponses } from './schemas.ts';

const num = (description: string) => ({ type: 'number', nullable: true, description });
const int = (description: string) => ({ type: 'integer', description });

const LAST_RUN = {
  type: 'object',
  properties: {
    Job: int('The jobId'),
    Status: { type: 'string', enum: ['Completed', 'Error', 'Killed', 'Unknown'] },
    RunStart: { type: 'string', example: '2026/11/21 09:30:00,000 UTC' },
    Seconds: { type: 'number', description: 'RunEnd − RunStart' },
  },
  required: ['Job', 'Status', 'RunStart', 'Seconds'],
  additionalProperties: false,
};

const FIGURES = {
  Runs: int('Finished runs (Completed, Error, Killed, Unknown), purged ones included'),
  Completed: int('Of them Completed'),
  Error: int('Of them Error'),
  Killed: int('Of them Killed'),
  Unknown: int('Of them Unknown'),
  MeanSeconds: num('Mean duration; null without runs'),
  P50Seconds: num('Median duration (nearest rank, within 2.2 %); null without runs'),
  P95Seconds: num('95th percentile of the durations (nearest rank, within 2.2 %); null without runs'),
  MaxSeconds: num('Longest run; null without runs'),
  LastRuns: {
    type: 'array',
    items: LAST_RUN,
    description: `The newest finished runs still in history, at most ${LAST_RUNS}, newest first`,
  },
};
const FIGURE_KEYS = Object.keys(FIGURES);

const STATISTICS = {
  type: 'object',
  properties: {
    ...FIGURES,
    Steps: {
      type: 'array',
      description: "A chain definition's steps in order, each with the figures of its step jobs",
      items: {
        type: 'object',
        properties: { Step: { type: 'string' }, ...FIGURES },
        required: ['Step', ...FIGURE_KEYS],
        additionalProperties: false,
      },
    },
  },
  required: FIGURE_KEYS,
  additionalProperties: false,
};

const date = (description: string) => ({ type: 'string', nullable: true, description });

const ESTIMATE = {
  type: 'object',
  properties: {
    EstimatedStart: date('When the job started or is expected to start'),
    EstimatedEnd: date('When it is expected to end (a finished job: when it ended); null when no statistics tell'),
    Basis: { type: 'string', enum: ['P50', 'P95', 'None'], description: 'The figure the estimate is built on' },
    Progress: num("A running job's elapsed time ÷ its estimated duration, 0…1; 1 once finished; else null"),
    CriticalPath: {
      type: 'array',
      description: "A chain job's steps left, each with the call expected to end last",
      items: {
        type: 'object',
        properties: {
          Step: { type: 'string' },
          StepJob: { type: 'integer', nullable: true },
          Call: { type: 'integer', nullable: true, description: "The call's index in the step's Calls, from 0" },
          Job: { type: 'integer', nullable: true, description: "The call's job, once it exists" },
          JobDefinition: { type: 'string', nullable: true },
          EstimatedEnd: { type: 'string' },
        },
        required: ['Step', 'StepJob', 'Call', 'Job', 'JobDefinition', 'EstimatedEnd'],
        additionalProperties: false,
      },
    },
  },
  required: ['EstimatedStart', 'EstimatedEnd', 'Basis', 'Progress'],
  additionalProperties: false,
};

type Req = { Params: { key: string }; Querystring: unknown };

/** Runtime statistics of a definition and a job's estimate (docs/architecture.md §8b). */
export function registerRuntimeRoutes(
  app: FastifyInstance,
  answers: RuntimeAnswers,
  served: Map<string, Set<string>>,
): void {
  served.set('/JobDefinition/:key/statistics', new Set(['GET']));
  served.set('/Job/:key/estimate', new Set(['GET']));
  app.get<Req>('/JobDefinition/:key/statistics', {
    schema: {
      tags: ['JobDefinition'],
      summary: "The definition's runtime statistics: counts, mean, P50, P95 and longest run, and its newest runs",
      params: {
        type: 'object',
        properties: {
          key: { type: 'string', description: 'Business key `<partition>.<name>`; a bare name means GLOBAL' },
        },
        required: ['key'],
      },
      response: { 200: STATISTICS, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => answers.statistics(req.principal, req.params.key),
  });
  app.get<Req>('/Job/:key/estimate', {
    schema: {
      tags: ['Job'],
      summary: "When the job is expected to start and end, from its definition's runtime statistics",
      params: {
        type: 'object',
        properties: { key: { type: 'string', description: 'The numeric jobId' } },
        required: ['key'],
      },
      querystring: {
        type: 'object',
        properties: {
          Basis: { type: 'string', enum: ['P50', 'P95'], description: 'The figure to estimate with (default P50)' },
        },
      },
      response: { 200: ESTIMATE, ...errorResponses(400, 401, 403, 404) },
    },
    handler: (req) => answers.estimate(req.principal, req.params.key, req.query),
  });
}
