// How the XML routes read a request (path, query, headers, body) and name the objects they answer with: shared by
// every group of routes, so each reads and refuses input the same way (docs/architecture.md §10).
import type { FastifyRequest } from 'fastify';
import { invalid, notFound, unsupportedMediaType } from '../../errors.ts';
import type { TypeName } from '../../model/fields.ts';
import { businessKey } from '../../model/keys.ts';
import { getType } from '../../model/registry.ts';
import type { RestObject } from './documents.ts';

type Params = Record<string, string>;
type Query = Record<string, string | undefined>;
export const params = (req: FastifyRequest) => req.params as Params;
export const query = (req: FastifyRequest) => req.query as Query;
export const header = (req: FastifyRequest, name: string): string | undefined => {
  const value = req.headers[name.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
};

/** `true`/`false` (case-insensitive) of a header or query parameter; 400 naming it otherwise. */
export function flag(value: string | undefined, name: string, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  const lower = value.toLowerCase();
  if (lower !== 'true' && lower !== 'false') throw invalid(`${name} must be true or false`);
  return lower === 'true';
}

export const bodyBytes = (req: FastifyRequest): Buffer => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));

/** XML bodies: only XML content types, and only UTF-8 (docs/architecture.md §10). */
export function xmlBody(req: FastifyRequest): Buffer {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const [media, ...rest] = type.split(';').map((s) => s.trim());
  if (media !== 'application/xml' && media !== 'text/xml')
    throw unsupportedMediaType('Send the object with Content-Type application/xml or text/xml');
  const charset = rest
    .find((r) => r.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8')
    throw unsupportedMediaType(`The charset must be UTF-8, not ${charset}`);
  const body = bodyBytes(req);
  if (body.length === 0) throw invalid('The body is empty: send the XML of an object');
  return body;
}

/** The definition type a path names; 404 for any other name. */
export function definitionType(name: string) {
  const type = getType(name);
  if (type?.storage !== 'definition') throw notFound('ObjectType', name);
  return type;
}

/** The `rest-object` of an object (its business key, URL and description), under the interface's base. */
export const restObjectMaker =
  (xmlBase: string) =>
  (type: TypeName, key: string, description: unknown): RestObject => ({
    businessKey: businessKey(type, key),
    url: `${xmlBase}/object/${type}/${key}`,
    description: typeof description === 'string' ? description : null,
  });
