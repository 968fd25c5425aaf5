import assert from 'node:assert/strict';
import type { JobRecord } from '../../src/domain/job.ts';
import type { TestServer } from './server.ts';

/**
 * Job history made fast for list tests: one real job is submitted (held, so the engine leaves it alone) and copied
 * into the real database through the store, as many times as a test needs, each copy with its own ids and the
 * attributes the test sets. The copies are ordinary rows: GET /Job/<id> reads them like any other job.
 */
export async function heldTemplate(t: TestServer): Promise<JobRecord> {
  const res = await t.req('POST', '/Job/GLOBAL.System_Sleep', {
    body: { HoldOnSubmit: true, JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] },
  });
  assert.equal(res.status, 201, res.body);
  const job = await t.server.store.jobs.get(res.json.jobId);
  assert.ok(job);
  return job;
}

/** Inserts one copy of `template` per entry of `changes` (bulk, a transaction per 2,000); returns them in order. */
export async function insertJobs(
  t: TestServer,
  template: JobRecord,
  changes: ReadonlyArray<Partial<JobRecord>>,
): Promise<JobRecord[]> {
  const store = t.server.store;
  const made: JobRecord[] = [];
  for (let from = 0; from < changes.length; from += 2000) {
    const chunk = changes.slice(from, from + 2000);
    await store.transaction(async (tx) => {
      const jobIds = await tx.jobs.nextJobIds(chunk.length);
      const uniqueIds = await tx.nextUniqueIds(chunk.length);
      const jobs = chunk.map(
        (change, i): JobRecord => ({
          ...template,
          jobId: jobIds[i] as number,
          uniqueId: uniqueIds[i] as number,
          ...change,
        }),
      );
      await tx.jobs.insertMany(jobs);
      made.push(...jobs);
    });
  }
  return made;
}
