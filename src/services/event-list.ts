import { EVENT_STATUSES } from '../model/types/Event.ts';
import { type Principal, partitionsWith } from '../security/privileges.ts';
import type { EventListOptions, EventRecord } from '../store/event-store.ts';
import { queryDate } from './date-range.ts';
import {
  encodeCursor,
  keyValue,
  type ListAnswer,
  type ListParam,
  listValue,
  oneOf,
  PAGE_PARAMS,
  readPage,
  readParams,
} from './list-query.ts';
import { selectFields } from './job-render.ts';

/** The query parameters of `GET /Event` (docs/architecture.md §15). */
export const EVENT_LIST_PARAMS: readonly ListParam[] = [
  { name: 'EventDefinition', description: 'Business key of the event definition; a bare name means GLOBAL' },
  { name: 'Status', description: `Comma-separated statuses (of ${EVENT_STATUSES.join(', ')})` },
  { name: 'Since', description: 'Raised at or after this date ("YYYY/MM/DD HH:MM:SS,mmm Zone" or ISO-8601)' },
  ...PAGE_PARAMS,
];

/**
 * A page of the events the caller may view (View on their definition's partition, filtered in SQL), newest first,
 * each rendered by `render` exactly as `GET /Event/<eventId>` renders it. Parsing is checked before the store is read.
 */
export async function listEvents(
  read: (options: EventListOptions) => Promise<EventRecord[]>,
  render: (e: EventRecord) => Record<string, unknown>,
  principal: Principal,
  query: unknown,
  defaultZone: string,
): Promise<ListAnswer> {
  const values = readParams(query, EVENT_LIST_PARAMS);
  const page = readPage(values, 'm');
  const options: EventListOptions = { limit: page.limit + 1 };
  const partitions = partitionsWith(principal, 'EventDefinition', ['View']);
  if (partitions !== undefined) options.partitions = partitions;
  const definition = keyValue(values, 'EventDefinition');
  if (definition !== undefined) options.definition = definition;
  const statuses = listValue(values, 'Status');
  if (statuses) options.statuses = [...new Set(oneOf('Status', statuses, EVENT_STATUSES))];
  const since = queryDate(values, 'Since', defaultZone);
  if (since !== undefined) options.since = since;
  if (page.after !== undefined) options.beforeId = Number(page.after);
  const found = await read(options);
  const shown = found.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    items: shown.map((e) => selectFields(render(e), page.fields)),
    next: found.length > page.limit && last ? encodeCursor('m', last.uniqueId) : null,
  };
}
