import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { xmlRoutes } from '../../src/http/xml/routes.ts';
import { definitionTypes } from '../../src/model/registry.ts';

/**
 * docs/interfaces.md lists exactly the routes served: the JSON ones as docs/swagger.yml has them (which
 * test/integration/openapi.test.ts checks against what the server serves), the XML ones as the route table the XML
 * interface and its WADL are made from.
 */

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const doc = read('docs/interfaces.md');
const [jsonPart, xmlPart] = doc.split(/^## 7\. XML interface$/m) as [string, string];

/** `METHOD path` of every row of the tables in `text` whose first cells are methods and a path. */
function documented(text: string): string[] {
  const rows = text.matchAll(/^\| ((?:`[A-Z]+`(?:, )?)+) +\| `([^`]+)` +\|/gm);
  return [...rows].flatMap(([, methods, path]) =>
    [...(methods as string).matchAll(/`([A-Z]+)`/g)].map(([, method]) => `${method} ${path}`),
  );
}
const sorted = (list: Iterable<string>) => [...list].sort();

test('the JSON tables of docs/interfaces.md list every route of docs/swagger.yml, and no other', () => {
  const paths = parse(read('docs/swagger.yml')).paths as Record<string, Record<string, unknown>>;
  const definitions = new Set(definitionTypes().map((t) => t.name));
  const served = new Set<string>();
  for (const [full, operations] of Object.entries(paths)) {
    const path = full.replace(/^.*\/rest\/v1/, '');
    // One row stands for every definition type's collection and object routes.
    const generic = path.replace(/^\/([A-Za-z]+)(?=$|\/\{key\}$)/, (whole, type) =>
      definitions.has(type) ? '/{Type}' : whole,
    );
    for (const method of Object.keys(operations)) served.add(`${method.toUpperCase()} ${generic}`);
  }
  assert.ok(served.has('GET /{Type}/{key}') && served.has('GET /Job'), 'docs/swagger.yml has its routes');
  const listed = documented(jsonPart);
  assert.equal(new Set(listed).size, listed.length, 'each route is listed once');
  assert.deepEqual(sorted(listed), sorted(served));
});

test('the XML table of docs/interfaces.md lists every service of the XML route table, and no other', () => {
  // Only the declarations are read: building the table touches none of its dependencies until a request comes.
  const routes = xmlRoutes({} as Parameters<typeof xmlRoutes>[0]);
  const served = routes.flatMap((r) => r.methods.map((m) => `${m} ${r.path.replace(/:(\w+)/g, '{$1}')}`));
  assert.ok(served.length > 10, 'the route table has its services');
  assert.deepEqual(sorted(documented(xmlPart)), sorted(served));
  for (const route of routes) assert.ok(xmlPart.includes(`\`${route.id}\``), `the service ${route.id} is named`);
});
