import type { TypeName } from '../model/fields.ts';
import type { Committed, ObjectChange } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';

/**
 * What the live feed says about a commit: one event per job status change and per write to a message, alert or
 * process server, each with the object type and partition whose View privilege lets a client see it. Pure.
 *
 * A job's change stays a compact tuple until a client needs its frame (`feedFrame`): most events of a busy server are
 * job changes, each is kept for resuming and sent to the other nodes (about 100 bytes of JSON as a tuple, 250 as the
 * event's data: a pass starting 300 jobs fits in 4 NOTIFY payloads, not 10), and most are never read by a client.
 */
export type FeedItem = JobChangeItem | ObjectItem;

/** A job's status change: [jobId, definition, partition, parentJob, from, to, time (ms), the job's zone, user, cause]. */
export type JobChangeItem = [
  jobId: number,
  definition: string,
  partition: string,
  parentJob: number | null,
  from: string | null,
  to: string,
  time: number,
  zone: string,
  user: string | null,
  cause: string,
];

/** An event about an object, built when it happens (they are few). */
export interface ObjectItem {
  /** The SSE `event:` name. */
  event: string;
  /** Privilege check: View on this type in this partition. */
  type: TypeName;
  partition: string;
  data: Record<string, unknown>;
}

const isJobChange = (item: FeedItem): item is JobChangeItem => Array.isArray(item);

export const feedType = (item: FeedItem): TypeName => (isJobChange(item) ? 'Job' : item.type);
export const feedPartition = (item: FeedItem): string => (isJobChange(item) ? item[2] : item.partition);

/** The event's SSE frame. */
export function feedFrame(id: number, item: FeedItem): string {
  if (!isJobChange(item)) return frame(id, item.event, item.data);
  const [jobId, definition, partition, parentJob, from, to, time, zone, user, cause] = item;
  const data = { jobId, definition, partition, parentJob, from, to, time: formatSafe(time, zone), user, cause };
  return frame(id, 'job', data);
}

const frame = (id: number, event: string, data: unknown): string =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

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
  for (const { job, from, to, entry } of committed.jobs) {
    const { jobId, definition, partition, parentJob } = job;
    items.push([jobId, definition, partition, parentJob, from, to, entry.time, job.data.zone, entry.user, entry.cause]);
  }
  const time = formatSafe(now, zone);
  for (const o of committed.objects) {
    const item = objectItem(o, time);
    if (item) items.push(item);
  }
  return items;
}

function objectItem(o: ObjectChange, time: string): ObjectItem | undefined {
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
