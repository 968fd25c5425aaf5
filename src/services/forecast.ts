import { type ForecastEntry, type ForecastKey, forecastPage } from '../engine/engine.ts';
import { invalid } from '../errors.ts';
import { type Principal, partitionsWith } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { formatInstant } from '../time/date-format.ts';
import { queryRange } from './date-range.ts';
import {
  keyValue,
  type ListParam,
  MAX_LIMIT,
  DEFAULT_LIMIT,
  partitionsToRead,
  partitionValue,
  readLimit,
  readParams,
} from './list-query.ts';

/**
 * `GET /forecast`: the starts the engine will make in a range (src/engine/forecast.ts computes them), as the caller
 * may view them: only jobs of partitions where they may view jobs, exactly as `GET /Job`.
 */

export const FORECAST_PARAMS: readonly ListParam[] = [
  { name: 'From', description: 'First instant of the range ("YYYY/MM/DD HH:MM:SS,mmm Zone" or ISO-8601); required' },
  { name: 'Until', description: 'End of the range (not included), at most 366 days after From; required' },
  { name: 'JobDefinition', description: 'Business key of the definition; a bare name means GLOBAL' },
  { name: 'Queue', description: 'Business key of the queue' },
  { name: 'Partition', description: 'Only jobs of this partition' },
  {
    name: 'Limit',
    description: `Starts per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
  },
  { name: 'After', description: 'The `next` cursor of the previous page' },
];

export interface ForecastAnswer {
  items: ForecastItem[];
  next: string | null;
}

export interface ForecastItem {
  Start: string;
  JobDefinition: string;
  Source: 'Recurrence' | 'Scheduled';
  Job: number;
  JobGroup: number | null;
  Queue: string;
  TimeWindow: string | null;
}

export class ForecastService {
  private readonly deps: { store: Store; clock: Clock; defaultTimeZone: string };

  constructor(deps: { store: Store; clock: Clock; defaultTimeZone: string }) {
    this.deps = deps;
  }

  async page(principal: Principal, query: unknown): Promise<ForecastAnswer> {
    const values = readParams(query, FORECAST_PARAMS);
    const { from, until } = queryRange(values, this.deps.defaultTimeZone);
    const limit = readLimit(values);
    const afterText = values.get('After');
    const after = afterText === undefined || afterText === '' ? undefined : decodeCursor(afterText);
    const definition = keyValue(values, 'JobDefinition');
    const queue = keyValue(values, 'Queue');
    const partitions = partitionsToRead(partitionsWith(principal, 'Job', ['View']), partitionValue(values));
    if (partitions?.length === 0) return { items: [], next: null };
    const { entries, more } = await forecastPage(this.deps.store, {
      from,
      until,
      now: this.deps.clock.now(),
      limit,
      ...(after ? { after } : {}),
      ...(definition !== undefined ? { definition } : {}),
      ...(queue !== undefined ? { queue } : {}),
      ...(partitions !== undefined ? { partitions } : {}),
    });
    const last = entries[entries.length - 1];
    return { items: entries.map(render), next: more && last ? encodeCursor(last) : null };
  }
}

function render(e: ForecastEntry): ForecastItem {
  const job = e.of;
  return {
    Start: formatInstant(e.start, job.zone),
    JobDefinition: job.definition,
    Source: e.source,
    Job: job.jobId,
    JobGroup: job.jobGroup,
    Queue: job.queue,
    TimeWindow: job.timeWindow,
  };
}

// The cursor is the last entry's sort key, opaque to clients like every list's (src/services/list-query.ts).
const CURSOR = /^f:(-?\d{1,16})\.(\d{1,16})\.(-?\d{1,16})$/;

const encodeCursor = (k: ForecastKey): string =>
  Buffer.from(`f:${k.start}.${k.job}.${k.occurrence}`, 'utf8').toString('base64url');

function decodeCursor(text: string): ForecastKey {
  const bad = () => invalid('Query parameter "After" is not a cursor this list gave (use the "next" of a page)');
  if (text.length > 200 || !/^[A-Za-z0-9_-]+$/.test(text)) throw bad();
  const m = CURSOR.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!m) throw bad();
  const [start, job, occurrence] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (![start, job, occurrence].every(Number.isSafeInteger)) throw bad();
  return { start, job, occurrence };
}
