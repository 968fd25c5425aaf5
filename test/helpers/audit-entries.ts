import assert from 'node:assert/strict';
import type { TestServer } from './server.ts';

// biome-ignore lint/suspicious/noExplicitAny: entries are read as a client reads them
export type Entry = any;

/** The newest audit entry's id (0 when none), read through GET /AuditEntry as the admin. */
export async function mark(t: TestServer): Promise<number> {
  const res = await t.req('GET', '/AuditEntry?Limit=1');
  assert.equal(res.status, 200, res.body);
  return res.json.items[0]?.Id ?? 0;
}

/** Every audit entry after `since`, oldest first, following the pages newest first as a client does. */
export async function entriesAfter(t: TestServer, since: number): Promise<Entry[]> {
  const all: Entry[] = [];
  let next: string | null = null;
  do {
    const res = await t.req('GET', `/AuditEntry?Limit=1000${next ? `&After=${next}` : ''}`);
    assert.equal(res.status, 200, res.body);
    for (const e of res.json.items) if (e.Id > since) all.push(e);
    next = res.json.items.some((e: Entry) => e.Id <= since) ? null : res.json.next;
  } while (next);
  return all.reverse();
}
