import type { JobStatus } from '../domain/job-status.ts';
import type { ActionBody } from '../domain/job-actions.ts';
import type { Form } from '../model/object-type.ts';
import { keyShapeOf, requireForm } from '../model/registry.ts';
import { validateForm } from '../model/validate.ts';
import type { ZonedInstant } from '../time/date-format.ts';

/**
 * The Job's request bodies, read through the registry's forms (model/types/Job.ts): the one validator, whose
 * messages name the field, and whose declaration the OpenAPI document is made from. What is checked against the
 * definition or the job (parameter names, Out parameters, the queue's existence) is the service's part.
 */

const FORMS: Record<ActionBody, Form> = {
  submit: requireForm('Job', 'submit'),
  properties: requireForm('Job', 'properties'),
  completion: requireForm('Job', 'completion'),
};

/** The fields of a submit body; a resubmit body may also be the job as GET renders it. */
export const SUBMIT_FIELDS: ReadonlySet<string> = new Set(FORMS.submit.byName.keys());

/** The properties a submit or resubmit body may set (docs/architecture.md §12), checked before anything is stored. */
export interface SubmitOptions {
  /** The items as given (checked for shape): each is converted to its parameter's DataType in the job's zone. */
  parameters: unknown;
  requestedStart: ZonedInstant | undefined;
  queue: string | undefined;
  priority: number | undefined;
  description: string | null | undefined;
  holdOnSubmit: boolean | undefined;
  /** A recurrence: the job is submitted again at each occurrence of this SubmitFrame. */
  submitFrame: string | undefined;
  /** Seconds the job may run before it is killed; undefined: the definition's (or its chain's) MaxRunTime. */
  maxRunTime: number | undefined;
}

const orUndefined = <T>(v: unknown): T | undefined => (v === null || v === undefined ? undefined : (v as T));

/** A submit body (`submit`) or an action's process properties (`properties`: the same fields). */
export function parseSubmitBody(
  body: unknown,
  defaultZone: string,
  form: 'submit' | 'properties' = 'submit',
): SubmitOptions {
  const v = validateForm(FORMS[form], body, { defaultZone, keyShapeOf });
  const raw = (body ?? {}) as Record<string, unknown>;
  return {
    parameters: raw.JobParameters,
    requestedStart: orUndefined<ZonedInstant>(v.RequestedStartTime),
    queue: orUndefined<string>(v.Queue),
    priority: orUndefined<number>(v.Priority),
    description: v.Description as string | null | undefined,
    holdOnSubmit: orUndefined<boolean>(v.HoldOnSubmit),
    submitFrame: orUndefined<string>(v.SubmitFrame),
    maxRunTime: orUndefined<number>(v.MaxRunTime),
  };
}

/** updateJob's body: the final status, the description, notes to append, Out values as given. */
export interface Completion {
  status: JobStatus | undefined;
  description: string | null | undefined;
  notes: string[];
  outValues: unknown;
}

export function parseCompletion(body: unknown, defaultZone: string): Completion {
  const v = validateForm(FORMS.completion, body, { defaultZone, keyShapeOf });
  return {
    status: orUndefined<JobStatus>(v.Status),
    description: v.Description as string | null | undefined,
    notes: (v.JobNotes as string[] | null | undefined) ?? [],
    outValues: ((body ?? {}) as Record<string, unknown>).JobParameters,
  };
}
