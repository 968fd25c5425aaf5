import assert from 'node:assert/strict';
import { test } from 'node:test';
import { completeDocument, operationId } from '../../../src/http/openapi-document.ts';

const BASE = '/millrace/api-extension/External/Vendor/Vendor_RestService/rest/v1';

test('operationIds derive from method and path, so routes added later get one', () => {
  assert.equal(operationId('get', `${BASE}/Queue/{key}`, BASE), 'getQueueByKey');
  assert.equal(operationId('put', `${BASE}/Job/{key}/{action}`, BASE), 'putJobByKeyByAction');
  assert.equal(
    operationId('post', `${BASE}/EventDefinition/{key}/clearAllPending`, BASE),
    'postEventDefinitionByKeyClearAllPending',
  );
  assert.equal(operationId('get', `${BASE}/Job/{key}/history`, BASE), 'getJobByKeyHistory');
  assert.equal(operationId('get', `${BASE}/list/job-definitions`, BASE), 'getListJobDefinitions');
});

test('completeDocument: every operation named, tags described, a server and the license', () => {
  const doc = completeDocument(
    {
      info: { title: 't' },
      paths: {
        [`${BASE}/Queue/{key}`]: { get: { tags: ['Queue'] }, parameters: [] },
        [`${BASE}/Import`]: { post: { tags: ['Import'], operationId: 'importCar' } },
        [`${BASE}/stream`]: { get: { tags: ['Stream'] } },
      },
    },
    BASE,
    'Apache-2.0',
  );
  const op = (path: string, method: string) =>
    (doc.paths?.[path]?.[method] as { operationId?: string } | undefined)?.operationId;
  assert.equal(op(`${BASE}/Queue/{key}`, 'get'), 'getQueueByKey');
  assert.equal(op(`${BASE}/Import`, 'post'), 'importCar');
  assert.deepEqual(
    doc.tags?.map((t) => t.name),
    ['Import', 'Queue', 'Stream'],
  );
  assert.ok(doc.tags?.every((t) => typeof t.description === 'string' && t.description.length > 0));
  assert.deepEqual(doc.servers?.[0]?.url, '/');
  assert.deepEqual((doc.info.license as { name: string }).name, 'Apache-2.0');
});
