import { type ActionBody, JOB_ACTIONS, type JobAction, jobAction } from '../../domain/job-actions.ts';
import { requireForm } from '../../model/registry.ts';

/** The OpenAPI text of `PUT /Job/<id>/<action>`, written from the action table so the document lists what it holds. */

/** The id of the body's schema in the document: the Job's form of that name. */
const schemaOf = (body: ActionBody): string => requireForm('Job', body).id;

const BODY: Record<ActionBody, string> = {
  properties: `optional process properties (${schemaOf('properties')})`,
  submit: `a submit body (${schemaOf('submit')}), or the job as GET renders it (as PUT /Job/<id>)`,
  completion: `${schemaOf('completion')}: Status, Description, JobNotes and JobParameters as {Name, OutValue}`,
  comment: `${schemaOf('comment')}: a Comment saying why, required`,
};

const named = (pick: (a: JobAction) => boolean): string =>
  JOB_ACTIONS.filter(pick)
    .join(', ')
    .replace(/, ([^,]*)$/, ' and $1');

/** One line for an action: what it does, where it applies, the privileges it needs, its body and its answer. */
export function actionLine(name: JobAction): string {
  const a = jobAction(name);
  const privileges = a.privileges.map((p) => `${p.type} ${p.privilege}`).join(' and ');
  const answer = a.creates ? '201 with the new job' : '200 with the job';
  return `- \`${name}\`: ${a.effect}. Applies in ${a.applies.join(', ')}. Needs ${privileges}. Body: ${BODY[a.body]}. Answers ${answer}.`;
}

export const ACTIONS_SUMMARY = `Perform an action on a job; ${named((a) => jobAction(a).creates)} answer the new job`;

export const ACTIONS_DESCRIPTION = [
  'The actions, with the statuses they apply in (elsewhere 409 naming the status):',
  '',
  ...JOB_ACTIONS.map(actionLine),
].join('\n');

/** What the body schema of the process-property actions says beyond its fields. */
export const ACTION_BODY_DESCRIPTION =
  'Optional process properties applied with the action. Description may change in any status; Priority, Queue, RequestedStartTime and JobParameters (In values) only before the job is handed to a process server, and on restart (to the new job).';
