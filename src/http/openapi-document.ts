import { getType } from '../model/registry.ts';
import { itemAt } from '../domain/item-at.ts';

/**
 * Completes the description document that @fastify/swagger builds from the route schemas, so that code generators
 * and linters take it: an operationId on every operation derived from its method and path (routes added later get
 * one without extra work), a 401 where a route lists no client error, a description for every tag (the registry's type description), a server and the
 * license. Pure: it rewrites the document object it is given.
 */

type Operation = { operationId?: string; tags?: string[]; responses?: Record<string, unknown> };
export interface OpenApiDocument {
  info: Record<string, unknown>;
  servers?: Array<{ url: string; description?: string }>;
  tags?: Array<{ name: string; description?: string }>;
  paths?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

const UNAUTHENTICATED = {
  description: 'Missing, unknown, revoked or expired API key',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/** Tags that are not object types of the registry. */
const OTHER_TAGS: Record<string, string> = {
  Import: 'Import of CAR archives: each import is a System_Import_Archive job.',
};

const pascal = (s: string): string =>
  s.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());

/**
 * `get` + `/…/v1/Queue/{key}` → `getQueueByKey`; `put` + `/…/v1/Job/{key}/{action}` → `putJobByKeyByAction`;
 * `post` + `/…/v1/EventDefinition/{key}/clearAllPending` → `postEventDefinitionByKeyClearAllPending`.
 * The path is taken after `base`, so the context and vendor do not show in the names.
 */
export function operationId(method: string, path: string, base: string): string {
  const rest = path.startsWith(base) ? path.slice(base.length) : path;
  const words = rest
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      const param = /^\{(.+)\}$/.exec(s);
      return param ? `By${pascal(itemAt(param, 1))}` : pascal(s);
    });
  return `${method.toLowerCase()}${words.join('')}`;
}

export function completeDocument(doc: OpenApiDocument, base: string, license: string): OpenApiDocument {
  const used = new Set<string>();
  const seen = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {}))
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const operation = op as Operation;
      let id = operation.operationId ?? operationId(method, path, base);
      for (let n = 2; seen.has(id); n++) id = `${operationId(method, path, base)}${n}`;
      seen.add(id);
      operation.operationId = id;
      for (const tag of operation.tags ?? []) used.add(tag);
      // Every route of the interface needs a key: one that lists no client error still answers 401 without it.
      operation.responses ??= {};
      const responses = operation.responses;
      if (!Object.keys(responses).some((code) => code.startsWith('4'))) responses['401'] = UNAUTHENTICATED;
    }
  const given = new Map((doc.tags ?? []).map((t) => [t.name, t]));
  doc.tags = [...used].sort().map(
    (name) =>
      given.get(name) ?? {
        name,
        description: getType(name)?.description ?? OTHER_TAGS[name] ?? `Operations on ${name}.`,
      },
  );
  doc.servers ??= [{ url: '/', description: 'The server that serves this document' }];
  doc.info.license ??= { name: license, url: 'https://www.apache.org/licenses/LICENSE-2.0' };
  return doc;
}
