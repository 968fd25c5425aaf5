import type { JobRecord } from '../domain/job.ts';
import type { Store } from '../store/store.ts';

/** Replies a RequestRestart operator message accepts. */
const RESTART_REPLIES = 'Restart|NoRestart';

/**
 * Creates an operator message sent by `job` (kept with the other objects, key = its unique id) and returns its id.
 * Used by RequestRestart restart behaviours and chain steps.
 */
export async function createOperatorMessage(
  tx: Store,
  job: JobRecord,
  fullText: string,
  now: number,
  replyExpression = RESTART_REPLIES,
): Promise<number> {
  const [id] = await tx.nextUniqueIds(1);
  const at = { ms: now, zone: job.data.zone };
  await tx.insertObject(
    {
      uniqueId: id as number,
      type: 'OperatorMessage',
      key: String(id),
      partition: job.partition,
      data: {
        FullText: fullText,
        ReplyExpression: replyExpression,
        ReplyStatus: 'Required',
        Reply: null,
        SenderObject: `Job:${job.jobId}`,
        CreationTime: at,
        ReplyTime: null,
        ReplyUser: null,
      },
      protection: null,
      creationTime: now,
      modificationTime: now,
    },
    [],
  );
  return id as number;
}
