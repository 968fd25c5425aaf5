import type { FieldKind } from '../../model/fields.ts';
import type { Form, ObjectType } from '../../model/object-type.ts';

/**
 * JSON Schemas (OpenAPI 3.0 dialect: `nullable`, not type arrays) derived from the registry. They document the
 * routes and drive response serialisation; request bodies are validated by the registry itself, whose messages
 * name the offending field precisely.
 */

type Schema = Record<string, unknown>;

const DATE_DESCRIPTION = 'Date written "YYYY/MM/DD HH:MM:SS,mmm <IANA zone>"; ISO-8601 is accepted on input.';

function kindSchema(kind: FieldKind, mode: 'input' | 'output'): Schema {
  switch (kind.kind) {
    case 'string':
    case 'text':
      return {
        type: 'string',
        maxLength: kind.maxLength,
        ...(kind.kind === 'string' && kind.pattern ? { pattern: kind.pattern.source } : {}),
      };
    case 'secret':
      return { type: 'string', maxLength: kind.maxLength, writeOnly: true };
    case 'number':
      return {
        type: kind.integer ? 'integer' : 'number',
        ...(kind.min !== undefined ? { minimum: kind.min } : {}),
        ...(kind.max !== undefined ? { maximum: kind.max } : {}),
      };
    case 'boolean':
      return { type: 'boolean' };
    case 'date':
      return { type: 'string', description: DATE_DESCRIPTION, example: '2026/11/21 09:30:00,000 Europe/Amsterdam' };
    case 'timezone':
      return { type: 'string', description: 'IANA time-zone name', example: 'Europe/Amsterdam' };
    case 'enum':
      return { type: 'string', enum: [...kind.values] };
    case 'reference':
      return { type: 'string', description: `Business key of a ${kind.type}`, example: 'GLOBAL.Name' };
    case 'record':
      return recordSchema(kind.fields, mode);
    case 'list': {
      const items = kindSchema(kind.of, mode);
      const many = { type: 'array', maxItems: kind.maxItems, items };
      return kind.single ? { oneOf: [items, many] } : many;
    }
    case 'map':
      // OpenAPI 3.0 has no propertyNames: the names' rule is said in words.
      return {
        type: 'object',
        maxProperties: kind.maxEntries,
        additionalProperties: { type: 'string', maxLength: kind.valueMaxLength },
        description: `Names (${kind.keyPatternText}, at most ${kind.keyMaxLength} characters, distinct ignoring case) mapped to text values.`,
      };
    case 'scalar':
      return { oneOf: [{ type: 'string', maxLength: kind.maxLength }, { type: 'number' }] };
  }
}

function recordSchema(fields: ObjectType['fields'], mode: 'input' | 'output'): Schema {
  const properties: Record<string, Schema> = {};
  for (const f of fields) {
    if (mode === 'output' && f.kind.kind === 'secret') continue;
    if (mode === 'input' && f.readOnly) continue;
    const s = kindSchema(f.kind, mode);
    const description = [f.description, f.derived && mode === 'input' ? 'Ignored on input.' : undefined]
      .filter(Boolean)
      .join(' ');
    // OpenAPI 3.0 allows `nullable` only beside `type`: a union carries it on each of its alternatives.
    const nullable = Array.isArray(s.oneOf)
      ? { oneOf: (s.oneOf as Schema[]).map((alt) => ({ ...alt, nullable: true })) }
      : { nullable: true };
    properties[f.name] = {
      ...s,
      ...nullable,
      ...(description ? { description } : {}),
      // A derived field is shown, and ignored when sent: OpenAPI's readOnly says exactly that.
      ...(f.readOnly || f.derived ? { readOnly: true } : {}),
      ...(f.default !== undefined && mode === 'input' ? { default: f.default } : {}),
    };
  }
  return { type: 'object', properties, additionalProperties: false };
}

export const outputSchemaId = (type: ObjectType): string => type.name;
export const inputSchemaId = (type: ObjectType): string => `${type.name}Input`;

/** Runtime objects addressed by an id of their own (docs/architecture.md §12): the renderer writes it before uniqueId. */
const ID_FIELDS: Record<string, { name: string; schema: Schema; example: string }> = {
  Job: { name: 'jobId', schema: { type: 'integer', readOnly: true }, example: '42' },
  Event: {
    name: 'eventId',
    schema: { type: 'string', readOnly: true, example: 'DataReady7', description: '<definition name><RaiseSequence>' },
    example: 'DataReady7',
  },
};

/** The object as GET, POST and PUT answer it. */
export function outputSchema(type: ObjectType): Schema {
  const base = recordSchema(type.fields, 'output');
  const id = ID_FIELDS[type.name];
  return {
    $id: outputSchemaId(type),
    title: type.name,
    description: type.description,
    ...base,
    properties: {
      ...(id ? { [id.name]: id.schema } : {}),
      uniqueId: { type: 'integer', readOnly: true },
      businessKey: { type: 'string', readOnly: true, example: `${type.name}:${id?.example ?? 'GLOBAL.Name'}` },
      ...(base.properties as Schema),
    },
  };
}

/** The body POST and PUT take: writable fields only; unknown and read-only fields are refused. */
export function inputSchema(type: ObjectType): Schema {
  return { $id: inputSchemaId(type), title: `${type.name} (input)`, ...recordSchema(type.fields, 'input') };
}

/** A form's body (the Job's submit, process properties, completion): the fields `validateForm` takes, all optional. */
export function formSchema(form: Form): Schema {
  return { $id: form.id, ...formBody(form) };
}

/** The same, inline (no `$id`), for a route that widens it (resubmit). */
export function formBody(form: Form): Schema {
  return { title: form.id, description: form.description, ...recordSchema(form.fields, 'input') };
}

export const ERROR_SCHEMA: Schema = {
  $id: 'Error',
  title: 'Error',
  type: 'object',
  properties: {
    code: { type: 'string', description: 'HTTP status code as text', example: '404' },
    message: { type: 'string', example: 'Unable to find object Job:123' },
  },
  required: ['code', 'message'],
  additionalProperties: false,
};

export const errorResponses = (...codes: number[]): Record<number, Schema> =>
  Object.fromEntries(codes.map((c) => [c, { $ref: 'Error#', description: ERROR_DESCRIPTIONS[c] ?? 'Error' }]));

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input; the message names the field',
  401: 'Missing, unknown, revoked or expired API key',
  403: 'A privilege is missing on an object the caller can see',
  404: 'The object does not exist or is not visible to the caller',
  409: 'The object exists, is referenced, is built in, or the action does not apply',
  413: 'The body is larger than 1 MiB',
  415: 'The body is not application/json',
  429: 'Too many failed authentications',
  503: 'The database is unavailable or the disk is full (Retry-After)',
};
