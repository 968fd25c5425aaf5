import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { upgradedFrom } from '../../helpers/older-database.ts';

/**
 * Migration 0009 moves a chain job's steps and handlers out of its row into chain_structures (benchmark B7). A
 * chain job stored before it (structure inside its data) reads the same after the upgrade: its row keeps only the
 * depth, and the store gives back the steps and handlers it had.
 */

const STEPS = [
  { Name: 'First', Calls: [{ JobDefinition: 'GLOBAL.System_Sleep', ParameterMappings: [] }] },
  { Name: 'Second', Calls: [{ JobDefinition: 'GLOBAL.System_Sleep' }], StatusHandlers: [] },
];
const HANDLERS = [{ Status: 'Error', Action: 'GotoStep', GotoStep: 'Second' }];

for (const backend of backends())
  describe(`chain structures kept apart from the row (${backend.name})`, () => {
    let db: Awaited<ReturnType<typeof backend.create>>;
    let store: Store;
    before(async () => {
      db = await backend.create();
      // A database as release 0008 left it, holding a chain job whose structure is inside its data.
      store = await upgradedFrom(backend, db, '0008_job_list_indexes', async (kysely) => {
        const data = {
          zone: 'UTC',
          parameters: [],
          notes: ['kept'],
          spec: { type: 'JobChain', script: null, completionStrategy: 'Default', returnCodeMap: '', restart: {} },
          chain: { structure: { steps: STEPS, handlers: HANDLERS, depth: 1 } },
        };
        await sql`insert into jobs (job_id, unique_id, definition, partition, status, priority, queue, requested_start,
          top_start, attempt, starts, submitted_by, data, creation_time, modification_time)
        values (7, 5007, 'GLOBAL.Flow', 'GLOBAL', 'Waiting', 50, 'GLOBAL.System', 1, 1, 0, 0, 'admin',
          ${JSON.stringify(data)}, 1, 1)`.execute(kysely);
      });
    });
    after(async () => {
      await store?.close();
      await db?.cleanup();
    });

    test('after the upgrade the row keeps the depth and the store the steps and handlers', async () => {
      const job = await store.jobs.get(7);
      assert.ok(job);
      assert.deepEqual(job.data.chain, { structure: { depth: 1 } });
      assert.deepEqual(job.data.notes, ['kept']);
      assert.deepEqual(await store.jobs.chainStructure(job), { steps: STEPS, handlers: HANDLERS });
    });

    test('a structure kept now is read back, frozen; another job has none; deleting the job drops it', async () => {
      const chain = { jobId: 8, uniqueId: 5008 };
      assert.equal(await store.jobs.chainStructure(chain), undefined);
      await store.jobs.putChainStructure(chain, { steps: STEPS, handlers: [] });
      const read = await store.jobs.chainStructure(chain);
      assert.deepEqual(read, { steps: STEPS, handlers: [] });
      assert.ok(read);
      assert.throws(() => (read.steps as unknown[]).push({}), TypeError, 'the cached copy cannot be changed');
      await store.jobs.delete([7]);
      assert.equal(await store.jobs.chainStructure({ jobId: 7, uniqueId: 9999 }), undefined);
    });
  });
