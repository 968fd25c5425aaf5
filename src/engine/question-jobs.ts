import type { JobRecord } from '../domain/job.ts';
import { applyOutText, parameterEnvironment } from '../domain/parameters.ts';
import { expressionProblem } from '../domain/reply-match.ts';
import { substitute } from '../domain/substitute.ts';
import { formatInstant } from '../time/date-format.ts';
import type { Store } from '../store/store.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Answer, Effects, Kernel } from './kernel.ts';
import { insertOperatorMessage } from './operator-message.ts';
import { itemAt } from '../domain/item-at.ts';

/**
 * Jobs that ask people: a System_OperatorMessage job sends an operator message, a UserMessage
 * job a user message, and both wait in Console until it is answered (operator-messages.ts, user-messages.ts in
 * services). Nothing runs meanwhile: the question and the waiting job are rows, so a restart loses neither.
 */

export const OPERATOR_MESSAGE_DEFINITION = 'GLOBAL.System_OperatorMessage';

/** Whether starting `job` means asking someone rather than running something. */
export const asks = (job: JobRecord): boolean =>
  job.data.spec.type === 'UserMessage' || job.definition === OPERATOR_MESSAGE_DEFINITION;

/** The substitution variables of a job's message text: the job's own and its parameters. */
export function jobVariables(job: JobRecord): Record<string, string> {
  return {
    ...parameterEnvironment(job.data.parameters),
    jobid: String(job.jobId),
    jobname: job.definition.slice(job.definition.indexOf('.') + 1),
    jobdefinition: job.definition,
    jobdescription: job.description ?? job.definition,
    partition: job.partition,
    queue: job.queue,
    requestedstarttime: formatInstant(job.requestedStart, job.data.zone),
  };
}

/** Starts an asking job (just set Running on GLOBAL.System): sends its message and parks it in Console. */
export async function startAsking(
  kernel: Kernel,
  tx: Store,
  job: JobRecord,
  now: number,
  effects: Effects,
): Promise<void> {
  const problem = job.data.spec.type === 'UserMessage' ? await askUsers(tx, job, now) : await askOperator(tx, job, now);
  if (problem) {
    await kernel.finish(tx, job, { status: 'Error', returnCode: null, notes: [problem] }, now, effects);
    return;
  }
  job.status = 'Console';
  job.modificationTime = now;
  await tx.jobs.updateMany([job]);
}

async function askOperator(tx: Store, job: JobRecord, now: number): Promise<string | undefined> {
  const param = (name: string) => job.data.parameters.find((p) => p.Name === name)?.InValueString ?? null;
  const text = param('Message');
  if (text === null || text.trim() === '') return 'Parameter Message is empty: there is nothing to ask';
  // Without an expression any reply will do (replies are never empty).
  const expression = param('ReplyExpression') || '.+';
  const problem = expressionProblem(expression);
  if (problem) return `Parameter ReplyExpression: ${problem}`;
  job.data.operatorMessage = await insertOperatorMessage(
    tx,
    {
      partition: job.partition,
      sender: `Job:${job.jobId}`,
      text: substitute(text, jobVariables(job)),
      replyExpression: expression,
      zone: job.data.zone,
    },
    now,
  );
  job.data.notes.push(`Waiting for a reply to OperatorMessage:${job.data.operatorMessage}`);
  return undefined;
}

async function askUsers(tx: Store, job: JobRecord, now: number): Promise<string | undefined> {
  const spec = job.data.spec.userMessage;
  if (!spec) return 'The definition has no UserMessage: there is nothing to ask';
  const id = itemAt(await tx.nextUniqueIds(1), 0);
  await tx.insertObject(
    {
      uniqueId: id,
      type: 'UserMessage',
      key: String(id),
      partition: job.partition,
      data: {
        Text: substitute(spec.Text, jobVariables(job)),
        Responses: spec.Responses,
        Participants: spec.Participants,
        Status: 'ManualTask',
        Job: job.jobId,
        Response: null,
        ReplyComment: null,
        ReplyUser: null,
        ReplyTime: null,
        CreationTime: { ms: now, zone: job.data.zone },
      },
      protection: null,
      creationTime: now,
      modificationTime: now,
    },
    [],
  );
  job.data.userMessage = id;
  job.data.notes.push(`Waiting for a reply to UserMessage:${id}`);
  return undefined;
}

/**
 * Reaction to a final status: a job that was waiting for an answer ended another way (killed, canceled, set Unknown): its message no longer
 * waits either, so nobody answers a question whose asker is gone.
 */
export async function closeQuestion(
  _k: Kernel,
  tx: Store,
  { job }: { job: JobRecord; status: JobStatus },
  now: number,
): Promise<void> {
  if (job.data.userMessage === undefined && job.data.operatorMessage === undefined) return;
  if (job.data.userMessage !== undefined) {
    const m = await tx.getObject('UserMessage', String(job.data.userMessage));
    if (m && m.data.Status === 'ManualTask')
      await tx.patchObjectData(m.uniqueId, {
        ...m.data,
        Status: 'Error',
        ReplyComment: `Job:${job.jobId} ended ${job.status}`,
      });
  }
  if (job.data.operatorMessage !== undefined && job.definition === OPERATOR_MESSAGE_DEFINITION) {
    const m = await tx.getObject('OperatorMessage', String(job.data.operatorMessage));
    if (m && m.data.ReplyStatus === 'Required')
      await tx.patchObjectData(m.uniqueId, {
        ...m.data,
        ReplyStatus: 'NotRequired',
        ReplyTime: { ms: now, zone: job.data.zone },
      });
  }
}

/** Reaction to a reply: a System_OperatorMessage job completes with the reply as its Out parameter. */
export async function answerAsking(
  kernel: Kernel,
  tx: Store,
  a: Answer,
  now: number,
  effects: Effects,
): Promise<boolean> {
  const job = a.job;
  if (job?.status !== 'Console' || job.definition !== OPERATOR_MESSAGE_DEFINITION) return false;
  applyOutText(job.data.parameters, { Reply: a.reply }, job.data.zone);
  await kernel.finish(
    tx,
    job,
    { status: 'Completed', returnCode: 0, notes: [`${a.user} replied ${JSON.stringify(a.reply)}`] },
    now,
    effects,
  );
  return true;
}
