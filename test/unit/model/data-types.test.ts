import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DataOf } from '../../../src/model/data.ts';
import { keyShapeOf, requireType } from '../../../src/model/registry.ts';
import { validateObjectBody } from '../../../src/model/validate.ts';
import type { StoredObject } from '../../../src/store/store.ts';

/**
 * The data type of an object comes from its declaration (docs/architecture.md §3). The type checks run with the
 * test suite's `tsc` (scripts/test.sh): each `@ts-expect-error` fails it when the line it marks compiles.
 */

const stored = (data: DataOf<'Queue'>): StoredObject<'Queue'> => ({
  uniqueId: 1,
  type: 'Queue',
  key: 'GLOBAL.Q',
  partition: 'GLOBAL',
  data,
  protection: null,
  creationTime: 0,
  modificationTime: 0,
});

test('a validated Queue body is the Queue data its declaration types', () => {
  const body = validateObjectBody(
    requireType('Queue'),
    { Name: 'Q', Partition: 'GLOBAL', ExecutionSize: 3, Held: true },
    { mode: 'create', defaultZone: 'UTC', keyShapeOf },
  );
  const data: DataOf<'Queue'> = { Name: 'Q', Partition: 'GLOBAL', ExecutionSize: 3, Held: true };
  for (const [field, value] of Object.entries(data)) assert.deepEqual(body[field], value, field);
  const queue = stored(data);
  const held: boolean | null | undefined = queue.data.Held;
  const size: number | null | undefined = queue.data.ExecutionSize;
  const name: string = queue.data.Name;
  assert.deepEqual([held, size, name], [true, 3, 'Q']);
  // @ts-expect-error a field the Queue does not declare does not compile
  assert.equal(queue.data.Priority, undefined);
  // @ts-expect-error a reference is its key, a string
  stored({ ...data, TimeWindow: 7 });
  // @ts-expect-error Name is required: a Queue's data has it
  stored({ Partition: 'GLOBAL' });
});

test('records and lists are typed from their items, enumerations by their values', () => {
  const steps: NonNullable<DataOf<'JobChain'>['Steps']> = [{ Name: 'S1', Calls: [{ JobDefinition: 'GLOBAL.A' }] }];
  assert.equal(steps[0]?.Calls?.[0]?.JobDefinition, 'GLOBAL.A');
  type Wait = NonNullable<DataOf<'JobDefinition'>['WaitEvents']>[number];
  const wait: Wait = { EventDefinition: 'E', AutoSubmit: 'OnlyOne' };
  // @ts-expect-error AutoSubmit is one of Never, Always, OnlyOne
  wait.AutoSubmit = 'Sometimes';
  assert.equal(wait.EventDefinition, 'E');
});

test("a map field's data is an object of texts: an HTTP definition's Headers", () => {
  type Http = NonNullable<DataOf<'JobDefinition'>['Http']>;
  const headers: Http['Headers'] = { Accept: 'application/json', 'X-Order': '${ORDER}' };
  // @ts-expect-error a header's value is text
  const numeric: Http['Headers'] = { Accept: 1 };
  // @ts-expect-error the list of {Name, Value} records is not the map's form
  const listed: Http['Headers'] = [{ Name: 'Accept', Value: 'application/json' }];
  assert.deepEqual(Object.keys(headers ?? {}), ['Accept', 'X-Order']);
  assert.ok(numeric && listed);
});
