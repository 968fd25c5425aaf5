import { invalid } from '../errors.ts';
import { JOB_STATUS_NAMES } from '../model/fields.ts';
import type { JobListFilter } from '../store/job-store.ts';
import { queryDate } from './date-range.ts';
import { keyValue, type ListParam, listValue, oneOf, PAGE_PARAMS, partitionValue, searchValue } from './list-query.ts';

/** The query parameters of `GET /Job` (pure parsing; JobService.list runs the query). */
export const JOB_LIST_PARAMS: readonly ListParam[] = [
  { name: 'Status', description: `Comma-separated statuses, e.g. Error,Killed (of ${JOB_STATUS_NAMES.join(', ')})` },
  { name: 'JobDefinition', description: 'Business key of the definition; a bare name means GLOBAL' },
  { name: 'Queue', description: 'Business key of the queue' },
  { name: 'ProcessServer', description: 'Business key of the process server' },
  { name: 'Partition', description: 'Only jobs of this partition' },
  { name: 'ParentJob', description: 'jobId of a chain or step job: its children', schema: { type: 'integer' } },
  { name: 'JobGroup', description: 'A recurrence: the JobGroup its jobs share', schema: { type: 'integer' } },
  { name: 'Since', description: 'Created at or after this date ("YYYY/MM/DD HH:MM:SS,mmm Zone" or ISO-8601)' },
  { name: 'Until', description: 'Created at or before this date' },
  { name: 'Search', description: "Case-insensitive text in the definition's key or the job's Description" },
  ...PAGE_PARAMS,
];

/** A job list's filter and the one partition asked for, from the parameters `readParams` accepted. */
export function parseJobFilter(
  values: ReadonlyMap<string, string>,
  defaultZone: string,
): JobListFilter & { partition?: string } {
  const f: JobListFilter & { partition?: string } = {};
  const statuses = listValue(values, 'Status');
  if (statuses) f.statuses = [...new Set(oneOf('Status', statuses, JOB_STATUS_NAMES))];
  const key = (name: string) => keyValue(values, name);
  const definition = key('JobDefinition');
  if (definition !== undefined) f.definition = definition;
  const queue = key('Queue');
  if (queue !== undefined) f.queue = queue;
  const processServer = key('ProcessServer');
  if (processServer !== undefined) f.processServer = processServer;
  const partition = partitionValue(values);
  if (partition !== undefined) f.partition = partition;
  const id = (name: string) => {
    const text = values.get(name)?.trim();
    if (text === undefined) return undefined;
    if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text)))
      throw invalid(`Query parameter "${name}" must be a job id (a positive whole number)`);
    return Number(text);
  };
  const parentJob = id('ParentJob');
  if (parentJob !== undefined) f.parentJob = parentJob;
  const jobGroup = id('JobGroup');
  if (jobGroup !== undefined) f.jobGroup = jobGroup;
  const date = (name: string) => queryDate(values, name, defaultZone);
  const since = date('Since');
  if (since !== undefined) f.since = since;
  const until = date('Until');
  if (until !== undefined) f.until = until;
  const search = searchValue(values);
  if (search !== undefined) f.search = search;
  return f;
}
