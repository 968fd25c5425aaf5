import type { JobFileRecord, JobRecord } from '../domain/job.ts';
import { requireType } from '../model/registry.ts';
import { renderObject } from '../model/render.ts';
import { jobValues } from '../model/types/Job.ts';

const JOB = requireType('Job');

/** The JSON of a job (docs/architecture.md §12): identifiers first, then the registry's Job fields, dates in the job's zone. */
export function renderJob(job: JobRecord, files: readonly JobFileRecord[]): Record<string, unknown> {
  return {
    jobId: job.jobId,
    ...renderObject(JOB, { uniqueId: job.uniqueId, businessKey: `Job:${job.jobId}` }, jobValues(job, files)),
  };
}

/** `?fields=jobId,uniqueId`: only the named fields, matched without regard to case (docs/architecture.md §12). */
export function selectFields(rendered: Record<string, unknown>, fields: string | undefined): Record<string, unknown> {
  if (fields === undefined || fields.trim() === '') return rendered;
  const wanted = new Set(fields.split(',').map((f) => f.trim().toLowerCase()));
  return Object.fromEntries(Object.entries(rendered).filter(([k]) => wanted.has(k.toLowerCase())));
}
