// The audit log as users read it (docs/architecture.md §18): GET /AuditEntry (newest first, keyset-paged, for the
// Auditor role and administrators), restore from an entry, and the checks and exports of `millrace audit`.
import { checkLinks } from '../domain/audit-chain.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import { mayAudit, type Principal } from '../security/privileges.ts';
import type { AuditEntry, AuditFilter } from '../store/audit-store.ts';
import { linkOfEntry } from '../store/audit-links.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { formatInstant } from '../time/date-format.ts';
import { queryDate } from './date-range.ts';
import { encodeCursor, type ListParam, PAGE_PARAMS, readPage, readParams } from './list-query.ts';
import type { ObjectService } from './objects.ts';

export const AUDIT_PARAMS: readonly ListParam[] = [
  { name: 'Type', description: 'Only entries about objects of this type (e.g. JobDefinition, Job, User)' },
  { name: 'Key', description: 'Only entries about the object of this key (e.g. GLOBAL.Nightly)' },
  { name: 'User', description: 'Only entries of this actor (a user name, or system)' },
  { name: 'Action', description: 'Only entries of this action (create, update, delete, restore, hold, signin…)' },
  { name: 'Since', description: 'Entries from this instant ("YYYY/MM/DD HH:MM:SS,mmm Zone" or ISO-8601)' },
  { name: 'Until', description: 'Entries up to this instant (included)' },
  ...PAGE_PARAMS.filter((p) => p.name !== 'fields'),
];

export interface AuditServiceDeps {
  store: Store;
  clock: Clock;
  objects: ObjectService;
  defaultTimeZone: string;
}

/** What `verify` found: how many entries it checked, and the first break of the chain if any. */
export interface VerifyResult {
  checked: number;
  firstId: number | null;
  problem: { id: number; problem: string } | null;
}

const VERIFY_BATCH = 1000;

export class AuditService {
  private readonly deps: AuditServiceDeps;

  constructor(deps: AuditServiceDeps) {
    this.deps = deps;
  }

  /** The body-free check of every audit route: the Auditor role or an administrator, else 403. */
  authorize(principal: Principal): void {
    if (!mayAudit(principal))
      throw forbidden('You need the Auditor privilege (the Auditor role, or Administrator) to read the audit log');
  }

  async page(principal: Principal, query: unknown): Promise<{ items: Record<string, unknown>[]; next: string | null }> {
    this.authorize(principal);
    const values = readParams(query, AUDIT_PARAMS);
    const page = readPage(values, 'a');
    const zone = this.deps.defaultTimeZone;
    const text = (name: string) => {
      const v = values.get(name)?.trim();
      if (v !== undefined && v.length > 255) throw invalid(`Query parameter "${name}" must be at most 255 characters`);
      return v === '' ? undefined : v;
    };
    const filter: AuditFilter = { limit: page.limit + 1 };
    const set = <K extends keyof AuditFilter>(k: K, v: AuditFilter[K] | undefined) => {
      if (v !== undefined) filter[k] = v;
    };
    set('type', text('Type'));
    set('key', text('Key'));
    set('user', text('User'));
    set('action', text('Action'));
    set('since', queryDate(values, 'Since', zone));
    set('until', queryDate(values, 'Until', zone));
    set('beforeId', page.after === undefined ? undefined : Number(page.after));
    const rows = await this.deps.store.audit.list(filter);
    const more = rows.length > page.limit;
    const shown = more ? rows.slice(0, page.limit) : rows;
    const last = shown.at(-1);
    return {
      items: shown.map((e) => renderEntry(e, zone)),
      next: more && last ? encodeCursor('a', last.id) : null,
    };
  }

  async get(principal: Principal, idText: string): Promise<Record<string, unknown>> {
    this.authorize(principal);
    return renderEntry(await this.entry(idText), this.deps.defaultTimeZone);
  }

  /** `POST /AuditEntry/<id>/restore`: the object as it is after the restore. */
  async restore(principal: Principal, idText: string): Promise<Record<string, unknown>> {
    this.authorize(principal);
    return this.deps.objects.restore(principal, await this.entry(idText));
  }

  private async entry(idText: string): Promise<AuditEntry> {
    const id = /^[1-9][0-9]{0,15}$/.test(idText) ? Number(idText) : undefined;
    const entry = id === undefined ? undefined : await this.deps.store.audit.get(id);
    if (!entry) throw notFound('AuditEntry', idText);
    return entry;
  }
}

/** Checks the chain from the oldest kept entry to the head (`millrace audit verify`). */
export async function verifyAudit(store: Store): Promise<VerifyResult> {
  let before: { id: number; hash: string } | undefined;
  let firstId: number | null = null;
  let checked = 0;
  for (;;) {
    const batch = await store.audit.ascending(before?.id ?? 0, VERIFY_BATCH);
    if (batch.length === 0) break;
    firstId ??= batch[0]?.id ?? null;
    const problem = checkLinks(before, batch.map(linkOfEntry));
    if (problem) return { checked, firstId, problem };
    checked += batch.length;
    const last = batch[batch.length - 1] as AuditEntry;
    before = { id: last.id, hash: last.hash };
  }
  const head = await store.audit.head();
  if (head && (before?.id !== head.id || before.hash !== head.hash))
    return {
      checked,
      firstId,
      problem: {
        id: head.id,
        problem:
          before === undefined || before.id < head.id
            ? `entries after ${before?.id ?? 0} up to ${head.id}, the last one written, are missing (deleted)`
            : `the last entry written was ${head.id}, but entry ${before.id} follows it or it was changed`,
      },
    };
  return { checked, firstId, problem: null };
}

/** The entries from `since` on, oldest first, one JSON text each (`millrace audit export`). */
export async function* exportAudit(store: Store, since: number, zone: string): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    const batch = await store.audit.ascending(after, VERIFY_BATCH, since);
    if (batch.length === 0) return;
    for (const e of batch) yield JSON.stringify(renderEntry(e, zone));
    after = (batch[batch.length - 1] as AuditEntry).id;
  }
}

/** An entry as the interface shows it: never the data a restore uses (sealed secrets stay in the database). */
export function renderEntry(e: AuditEntry, zone: string): Record<string, unknown> {
  return {
    Id: e.id,
    Time: formatInstant(e.time, zone),
    User: e.actor.user,
    ApiKeyId: e.actor.apiKeyId,
    Address: e.actor.address,
    Interface: e.actor.interface,
    Action: e.action,
    ObjectType: e.object?.type ?? null,
    ObjectKey: e.object?.key ?? null,
    ObjectUniqueId: e.object?.uniqueId ?? null,
    Detail: e.detail,
    Changes: Object.entries(e.diff ?? {}).map(([Field, d]) => ({ Field, Before: d.before, After: d.after })),
    Restorable: e.restore !== null && e.object !== null,
    PreviousHash: e.prevHash,
    Hash: e.hash,
  };
}
