// The field-level difference an audit entry shows (docs/architecture.md §18), with every secret written `***`:
// fields the registry declares secret, and at any depth a name that says it holds one.
import { isDeepStrictEqual } from 'node:util';
import { getType } from './registry.ts';

/** How a secret is shown, whatever it was (a present value; an absent one stays null). */
export const MASK = '***';

/** Names whose values are secrets wherever they appear (a webhook's header, a user's password hash). */
const SECRET_NAME = /password|secret|token|authorization|api.?key|credential_value/i;

/** One changed field: its value before and after (null when absent on that side). */
export type AuditDiff = Record<string, { before: unknown; after: unknown }>;

/** A value with the secrets under it masked. */
export function maskValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskValue);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_NAME.test(k) && v !== null && v !== undefined ? MASK : maskValue(v);
  return out;
}

function secretFields(typeName: string): ReadonlySet<string> {
  const type = getType(typeName);
  return new Set(type ? type.fields.filter((f) => f.kind.kind === 'secret').map((f) => f.name) : []);
}

/**
 * The fields that differ between two versions of an object's data (either may be absent: a creation, a deletion),
 * each side masked. Secrets that changed show `***` on both sides, so the entry says a secret changed, not to what.
 */
export function auditDiff(
  typeName: string,
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): AuditDiff {
  const secrets = secretFields(typeName);
  const diff: AuditDiff = {};
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const name of names) {
    const b = before?.[name] ?? null;
    const a = after?.[name] ?? null;
    if (isDeepStrictEqual(b, a)) continue;
    const secret = secrets.has(name) || SECRET_NAME.test(name);
    diff[name] = {
      before: secret && b !== null ? MASK : maskValue(b),
      after: secret && a !== null ? MASK : maskValue(a),
    };
  }
  return diff;
}
