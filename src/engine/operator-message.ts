import type { JobRecord } from '../domain/job.ts';
import type { Store } from '../store/store.ts';
import { itemAt } from '../domain/item-at.ts';

/** Replies a RequestRestart operator message accepts. */
const RESTART_REPLIES = 'Restart|NoRestart';

export interface NewOperatorMessage {
  partition: string;
  /** Business key of what sent it: `Job:42`, `Alert:7`. */
  sender: string;
  text: string;
  /** Null: no reply is required. */
  replyExpression: string | null;
  /** Zone its times are written in. */
  zone: string;
}

/** Stores an operator message (kept with the other objects, key = its unique id) and returns its id. */
export async function insertOperatorMessage(
  tx: Store,
  m: NewOperatorMessage,
  now: number,
  id?: number,
): Promise<number> {
  const uniqueId = id ?? itemAt(await tx.nextUniqueIds(1), 0);
  await tx.insertObject(
    {
      uniqueId,
      type: 'OperatorMessage',
      key: String(uniqueId),
      partition: m.partition,
      data: {
        FullText: m.text,
        ReplyExpression: m.replyExpression,
        ReplyStatus: m.replyExpression === null ? 'NotRequired' : 'Required',
        Reply: null,
        SenderObject: m.sender,
        CreationTime: { ms: now, zone: m.zone },
        ReplyTime: null,
        ReplyUser: null,
      },
      protection: null,
      creationTime: now,
      modificationTime: now,
    },
    [],
  );
  return uniqueId;
}

/** An operator message sent by `job`, by default asking Restart or NoRestart (RequestRestart, chain steps). */
export function createOperatorMessage(
  tx: Store,
  job: JobRecord,
  fullText: string,
  now: number,
  replyExpression = RESTART_REPLIES,
): Promise<number> {
  return insertOperatorMessage(
    tx,
    { partition: job.partition, sender: `Job:${job.jobId}`, text: fullText, replyExpression, zone: job.data.zone },
    now,
  );
}
