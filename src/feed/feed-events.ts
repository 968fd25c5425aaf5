import type { TypeName } from '../model/fields.ts';
import type { Committed, ObjectChange } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';

/**
 * What the live feed says about a commit: one event per job status change and per write to a message, alert or
 * process server, each with the object type and partition whose View privilege lets a client see it. Pure.
 */
export interface FeedItem {
  /** The SSE `event:` name. */
  event: string;
  /** Privilege check: View on this type in this partition. */
  type: TypeName;
  partition: string;
  data: Record<string, unknown>;
}

/** The object types the store tells the feed about. */
export const FEED_OBJECT_TYPES: ReadonlySet<TypeName> = new Set<TypeName>([
  'OperatorMessage',
  'UserMessage',
  'Alert',
  'ProcessServer',
]);

const formatSafe = (ms: number, zone: string): string => {
  try {
    return formatInstant(ms, zone);
  } catch {
    return formatInstant(ms, 'UTC');
  }
};

export function feedItems(committed: Committed, now: number, zone: string): FeedItem[] {
  const items: FeedItem[] = [];
  for (const c of committed.jobs)
    items.push({
      event: 'job',
      type: 'Job',
      partition: c.job.partition,
      data: {
        jobId: c.job.jobId,
        definition: c.job.definition,
        partition: c.job.partition,
        parentJob: c.job.parentJob,
        from: c.from,
        to: c.to,
        time: formatSafe(c.entry.time, c.job.data.zone),
        user: c.entry.user,
        cause: c.entry.cause,
      },
    });
  const time = formatSafe(now, zone);
  for (const o of committed.objects) {
    const item = objectItem(o, time);
    if (item) items.push(item);
  }
  return items;
}

function objectItem(o: ObjectChange, time: string): FeedItem | undefined {
  const base = { type: o.type, partition: o.partition };
  const change = o.created ? 'created' : 'updated';
  const d = o.data;
  switch (o.type) {
    case 'OperatorMessage':
      return {
        ...base,
        event: 'operator-message',
        data: {
          id: Number(o.key),
          partition: o.partition,
          change,
          replyStatus: d.ReplyStatus ?? null,
          sender: d.SenderObject ?? null,
          time,
        },
      };
    case 'UserMessage':
      return {
        ...base,
        event: 'user-message',
        data: { id: Number(o.key), partition: o.partition, change, status: d.Status ?? null, job: d.Job ?? null, time },
      };
    case 'Alert':
      return {
        ...base,
        event: 'alert',
        data: {
          id: Number(o.key),
          partition: o.partition,
          change,
          status: d.Status ?? null,
          escalation: d.AlertEscalation ?? null,
          // What raised it and about what (a deadline's alerts: `Deadline:<key>` about `Job:<id>`).
          source: d.AlertSource ?? null,
          sourceObject: d.SourceObject ?? null,
          time,
        },
      };
    case 'ProcessServer':
      return {
        ...base,
        event: 'process-server',
        data: {
          processServer: o.key,
          partition: o.partition,
          status: d.Status ?? null,
          desiredStatus: d.DesiredStatus ?? null,
          time,
        },
      };
    default:
      return undefined;
  }
}
