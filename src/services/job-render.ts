import type { JobFileRecord, JobRecord } from '../domain/job.ts';
import { statusCode } from '../domain/job-status.ts';
import { requireType } from '../model/registry.ts';
import { renderObject } from '../model/render.ts';

const JOB = requireType('Job');

/** The JSON of a job (docs/architecture.md §12): identifiers first, then the registry's Job fields, dates in the job's zone. */
export function renderJob(job: JobRecord, files: readonly JobFileRecord[]): Record<string, unknown> {
  const zone = job.data.zone;
  const at = (ms: number | null) => (ms === null ? null : { ms, zone });
  return {
    jobId: job.jobId,
    ...renderObject(
      JOB,
      { uniqueId: job.uniqueId, businessKey: `Job:${job.jobId}` },
      {
        JobDefinition: job.definition,
        Description: job.description,
        Documentation: null,
        Status: job.status,
        StatusCode: statusCode(job.status),
        Priority: job.priority,
        Queue: job.queue,
        ProcessServer: job.processServer,
        RequestedStartTime: at(job.requestedStart),
        ScheduledStartTime: at(job.scheduledStart),
        RunStart: at(job.runStart),
        RunEnd: at(job.runEnd),
        ReturnCode: job.returnCode,
        ParentJob: job.parentJob,
        JobGroup: job.jobGroup,
        SubmittedBy: job.submittedBy,
        JobParameters: job.data.parameters,
        JobNotes: job.data.notes,
        JobFiles: files.map((f) => ({
          uniqueId: f.uniqueId,
          Name: f.name,
          FileOrder: f.fileOrder,
          Type: f.type,
          Size: f.size,
        })),
        OperatorMessage:
          job.status === 'ConsoleRestart' || job.status === 'Console' ? (job.data.operatorMessage ?? null) : null,
        UserMessage: job.status === 'Console' ? (job.data.userMessage ?? null) : null,
        CreationTime: at(job.creationTime),
        LastModificationTime: at(job.modificationTime),
      },
    ),
  };
}

/** `?fields=jobId,uniqueId`: only the named fields, matched without regard to case (docs/architecture.md §12). */
export function selectFields(rendered: Record<string, unknown>, fields: string | undefined): Record<string, unknown> {
  if (fields === undefined || fields.trim() === '') return rendered;
  const wanted = new Set(fields.split(',').map((f) => f.trim().toLowerCase()));
  return Object.fromEntries(Object.entries(rendered).filter(([k]) => wanted.has(k.toLowerCase())));
}
