import { formatInstant, type ZonedInstant } from '../time/date-format.ts';
import type { FieldKind } from './fields.ts';
import type { ObjectType } from './object-type.ts';

const isZoned = (v: unknown): v is ZonedInstant =>
  typeof v === 'object' && v !== null && 'ms' in v && typeof v.ms === 'number';

/** Stored form → output form of one value: dates written in their own zone, secrets never. */
function output(kind: FieldKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (kind.kind) {
    case 'date':
      return isZoned(v) ? formatInstant(v.ms, v.zone) : null;
    case 'record': {
      const rec = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of kind.fields) if (f.kind.kind !== 'secret') out[f.name] = output(f.kind, rec[f.name]);
      return out;
    }
    case 'map':
      // Object.fromEntries keeps every name an own property (a name `__proto__` stays a name).
      return typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).filter(([, x]) => typeof x === 'string'))
        : {};
    case 'list':
      return Array.isArray(v) ? v.map((item) => output(kind.of, item)) : [];
    default:
      return v;
  }
}

/**
 * The JSON form of a stored object: identifiers first (as every interface example writes them), then every field of the
 * registry in declaration order, read-only times last. Secret fields are left out entirely.
 */
export function renderObject(
  type: ObjectType,
  ids: { uniqueId: number; businessKey: string },
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { uniqueId: ids.uniqueId, businessKey: ids.businessKey };
  for (const f of type.fields) {
    if (f.kind.kind === 'secret') continue;
    out[f.name] = output(f.kind, data[f.name]);
  }
  return out;
}
