import { MAX_BULK_JOBS } from '../domain/bulk.ts';
import { invalid, MillraceError } from '../errors.ts';
import { keyShapeOf, requireForm } from '../model/registry.ts';
import { validateForm } from '../model/validate.ts';
import type { JobListFilter } from '../store/job-store.ts';
import { JOB_LIST_PARAMS, parseJobFilter } from './job-list.ts';
import { type ListParam, PAGE_PARAMS, readParams } from './list-query.ts';

/**
 * The body of a bulk action (docs/architecture.md §6), read through the Job's `bulk` form (the one validator, whose
 * declaration the OpenAPI document shows), then what the form cannot say: exactly one of Filter and JobIds, and a
 * Filter made of GET /Job's own query parameters, read by the list's own parser. Pure: no I/O.
 */

const FORM = requireForm('Job', 'bulk');

/** The parameters of GET /Job that choose jobs; paging and fields are the list's, not a selection. */
const FILTER_PARAMS: readonly ListParam[] = JOB_LIST_PARAMS.filter((p) => !PAGE_PARAMS.includes(p));

export interface BulkRequest {
  /** The jobs GET /Job would list with the Filter (and the one partition it names), or undefined with JobIds. */
  filter: (JobListFilter & { partition?: string }) | undefined;
  /** The jobs named, each once, in the order given; undefined with a Filter. */
  jobIds: number[] | undefined;
  comment: string | undefined;
  dryRun: boolean;
  async: boolean;
}

export function parseBulkRequest(body: unknown, defaultZone: string): BulkRequest {
  const v = validateForm(FORM, body, { defaultZone, keyShapeOf });
  const hasFilter = v.Filter !== undefined && v.Filter !== null;
  const hasIds = v.JobIds !== undefined && v.JobIds !== null;
  if (hasFilter === hasIds) throw invalid('Give exactly one of the fields "Filter" and "JobIds"');
  const ids = hasIds ? [...new Set(v.JobIds as number[])] : undefined;
  if (ids && ids.length > MAX_BULK_JOBS)
    throw invalid(`Field "JobIds": at most ${MAX_BULK_JOBS.toLocaleString('en')} jobs per request`);
  return {
    filter: hasFilter ? readFilter(v.Filter as Record<string, string>, defaultZone) : undefined,
    jobIds: ids,
    comment: typeof v.Comment === 'string' && v.Comment.trim() !== '' ? v.Comment : undefined,
    dryRun: v.DryRun === true,
    async: v.Async === true,
  };
}

/** The Filter's names and values as GET /Job reads its query (the same names, checks and messages). */
function readFilter(given: Record<string, string>, defaultZone: string): JobListFilter & { partition?: string } {
  try {
    return parseJobFilter(readParams(given, FILTER_PARAMS), defaultZone);
  } catch (e) {
    if (e instanceof MillraceError && e.status === 400) throw invalid(`Field "Filter": ${e.message}`);
    throw e;
  }
}
