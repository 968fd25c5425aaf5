import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { interfacePaths } from '../../src/config/config.ts';
import { definitionTypes } from '../../src/model/registry.ts';
import { renderOpenApi, SWAGGER_FILE } from '../../scripts/openapi.ts';
import { backends } from '../helpers/backends.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('the description document (swagger.yml)', () => {
  const [sqlite] = backends();
  let t: TestServer;
  let served: string;
  before(async () => {
    t = await startTestServer(sqlite as typeof backends extends () => (infer B)[] ? B : never);
    const res = await t.req('GET', `/${interfacePaths(t.config).swagger}`, { key: null });
    assert.equal(res.status, 200, 'served without an API key');
    assert.match(String(res.headers['content-type']), /yaml/);
    served = res.body;
  });
  after(() => t.close());

  test('is valid OpenAPI 3 according to swagger-parser', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'millrace-swagger-'));
    try {
      const file = join(dir, 'swagger.yml');
      await writeFile(file, served);
      const api = (await SwaggerParser.validate(file)) as { openapi: string; components: { securitySchemes: object } };
      assert.match(api.openapi, /^3\./);
      assert.deepEqual(api.components.securitySchemes, { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the checked-in docs/swagger.yml is what the server serves (run `npm run gen:openapi` when this fails)', async () => {
    assert.equal(await readFile(SWAGGER_FILE, 'utf8'), served);
    assert.equal(await renderOpenApi(), served);
  });

  test('lists exactly the routes the JSON interface serves, with their methods', async () => {
    const api = (await SwaggerParser.parse(structuredClone(await parsedYaml(served)))) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const expected = new Map<string, string[]>();
    for (const type of definitionTypes())
      expected.set(`${t.base}/${type.name}/{key}`, ['delete', 'get', 'post', 'put']);
    // PATCH: a job changed before it starts (docs/architecture.md §6).
    expected.set(`${t.base}/Job/{key}`, ['delete', 'get', 'patch', 'post', 'put']);
    expected.set(`${t.base}/Job/{key}/{action}`, ['post', 'put']);
    expected.set(`${t.base}/JobFile/{key}/content`, ['get']);
    expected.set(`${t.base}/ProcessServer/{key}/{action}`, ['put']);
    for (const kind of ['OperatorMessage', 'UserMessage', 'Alert']) {
      expected.set(`${t.base}/${kind}/{key}`, ['get']);
      expected.set(`${t.base}/${kind}/{key}/reply`, ['put']);
    }
    for (const source of ['ProcessServerAlertSource', 'JobDefinitionAlertSource'])
      for (const action of ['enable', 'disable']) expected.set(`${t.base}/${source}/{key}/${action}`, ['put']);
    expected.set(`${t.base}/Event/{key}`, ['delete', 'get', 'post']);
    // Deleting a Cleared event, an answered operator message; passing an approval on.
    expected.set(`${t.base}/OperatorMessage/{key}`, ['delete', 'get']);
    for (const action of ['forward', 'delegate']) expected.set(`${t.base}/UserMessage/{key}/${action}`, ['put']);
    expected.set(`${t.base}/Event`, ['get']);
    expected.set(`${t.base}/Import`, ['post']);
    expected.set(`${t.base}/Event/{key}/clear`, ['post']);
    expected.set(`${t.base}/EventDefinition/{key}/clear`, ['post']);
    expected.set(`${t.base}/EventDefinition/{key}/clearAllPending`, ['post']);
    // The lists of the console: every definition type, jobs and the inboxes.
    for (const name of [
      ...definitionTypes().map((type) => type.name),
      'Job',
      'OperatorMessage',
      'UserMessage',
      'Alert',
    ])
      expected.set(`${t.base}/${name}`, ['get']);
    // Job history and the live feed.
    expected.set(`${t.base}/Job/{key}/history`, ['get']);
    // Bulk actions and an asynchronous one's progress (docs/architecture.md §6).
    expected.set(`${t.base}/Job/bulk/{action}`, ['post']);
    expected.set(`${t.base}/Job/bulk/requests/{requestId}`, ['get']);
    expected.set(`${t.base}/stream`, ['get']);
    // Why jobs wait: one job, and the page of a job list at once.
    expected.set(`${t.base}/Job/{key}/waiting`, ['get']);
    expected.set(`${t.base}/waiting`, ['get']);
    // A time window's openings (docs/architecture.md §5a).
    expected.set(`${t.base}/TimeWindow/{key}/openings`, ['get']);
    // A process server's file watches (docs/architecture.md §7b).
    expected.set(`${t.base}/ProcessServer/{key}/filewatches`, ['get']);
    // The starts to come, in order.
    expected.set(`${t.base}/forecast`, ['get']);
    // Today's deadlines (docs/architecture.md §8c).
    expected.set(`${t.base}/deadlines`, ['get']);
    // Runtime statistics of a definition and a job's estimate (docs/architecture.md §8b).
    expected.set(`${t.base}/JobDefinition/{key}/statistics`, ['get']);
    expected.set(`${t.base}/Job/{key}/estimate`, ['get']);
    // Users, roles and API keys, for administrators (docs/architecture.md §10).
    expected.set(`${t.base}/User`, ['get']);
    expected.set(`${t.base}/Role`, ['get']);
    expected.set(`${t.base}/User/{name}`, ['delete', 'get', 'post', 'put']);
    expected.set(`${t.base}/User/{name}/apikeys`, ['get', 'post']);
    expected.set(`${t.base}/User/{name}/apikeys/{id}`, ['delete']);
    // The audit log and restore from it (docs/architecture.md §18).
    expected.set(`${t.base}/AuditEntry`, ['get']);
    expected.set(`${t.base}/AuditEntry/{id}`, ['get']);
    expected.set(`${t.base}/AuditEntry/{id}/restore`, ['post']);
    const actual = new Map(
      Object.entries(api.paths).map(([p, ops]) => [
        p,
        Object.keys(ops)
          .filter((k) => k !== 'parameters')
          .sort(),
      ]),
    );
    assert.deepEqual(actual, expected);
  });
});

/** The document as swagger-parser reads it from a YAML file; the file is removed again. */
async function parsedYaml(text: string): Promise<Awaited<ReturnType<typeof SwaggerParser.parse>>> {
  const dir = await mkdtemp(join(tmpdir(), 'millrace-swagger-'));
  try {
    const file = join(dir, 'swagger.yml');
    await writeFile(file, text);
    return (await SwaggerParser.parse(file)) as Awaited<ReturnType<typeof SwaggerParser.parse>>;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
