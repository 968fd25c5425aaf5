import { isJobStatus, type JobStatus } from '../domain/job-status.ts';
import type { ActionBody } from '../domain/job-actions.ts';
import type { Form } from '../model/object-type.ts';
import { keyShapeOf, requireForm } from '../model/registry.ts';
import { isPlainObject, validateForm } from '../model/validate.ts';
import type { ZonedInstant } from '../time/date-format.ts';
import { invalid } from '../errors.ts';

/**
 * The Job's request bodies, read through the registry's forms (model/types/Job.ts): the one validator, whose
 * messages name the field, and whose declaration the OpenAPI document is made from. What is checked against the
 * definition or the job (parameter names, Out parameters, the queue's existence) is the service's part.
 */

const FORMS: Record<ActionBody, Form> = {
  submit: requireForm('Job', 'submit'),
  properties: requireForm('Job', 'properties'),
  completion: requireForm('Job', 'completion'),
  comment: requireForm('Job', 'comment'),
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

// The form has checked each field's type; these only tell TypeScript what it checked (null reads as not given).
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const count = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const flag = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const instant = (v: unknown): ZonedInstant | undefined =>
  isPlainObject(v) && typeof v.ms === 'number' && typeof v.zone === 'string' ? { ms: v.ms, zone: v.zone } : undefined;
/** A Description: null clears it, undefined leaves it. */
const description = (v: unknown): string | null | undefined => (v === null ? null : text(v));
/** A field of the body as given (validateForm has made sure it is an object, or null or undefined). */
const given = (body: unknown, name: string): unknown => (isPlainObject(body) ? body[name] : undefined);

/** A submit body (`submit`) or an action's process properties (`properties`: the same fields). */
export function parseSubmitBody(
  body: unknown,
  defaultZone: string,
  form: 'submit' | 'properties' = 'submit',
): SubmitOptions {
  const v = validateForm(FORMS[form], body, { defaultZone, keyShapeOf });
  return {
    parameters: given(body, 'JobParameters'),
    requestedStart: instant(v.RequestedStartTime),
    queue: text(v.Queue),
    priority: count(v.Priority),
    description: description(v.Description),
    holdOnSubmit: flag(v.HoldOnSubmit),
    submitFrame: text(v.SubmitFrame),
    maxRunTime: count(v.MaxRunTime),
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
    status: isJobStatus(v.Status) ? v.Status : undefined,
    description: description(v.Description),
    notes: Array.isArray(v.JobNotes) ? v.JobNotes.filter((n) => typeof n === 'string') : [],
    outValues: given(body, 'JobParameters'),
  };
}

/**
 * markcompleted's and markerror's body: the comment (why a status is set by hand), not blank. Undefined for no body
 * (or an empty one), which the action refuses once it knows it applies: in another status the 409 comes first.
 */
export function parseComment(body: unknown): string | undefined {
  if (body === undefined || body === null || (isPlainObject(body) && Object.keys(body).length === 0)) return undefined;
  const v = validateForm(FORMS.comment, body, { defaultZone: 'UTC', keyShapeOf });
  const comment = typeof v.Comment === 'string' ? v.Comment.trim() : '';
  if (comment === '') throw invalid('Field "Comment": say why the status is set by hand; it must not be blank');
  return comment;
}

/** The 400 of a mark without its comment. */
export const COMMENT_REQUIRED = 'Field "Comment" is required';
