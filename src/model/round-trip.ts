import { isDeepStrictEqual } from 'node:util';
import { emptyRecord, own } from '../domain/own.ts';
import { invalid } from '../errors.ts';
import type { ObjectType } from './object-type.ts';
import { isPlainObject } from './validate.ts';

/**
 * What GET renders can be sent back with PUT (and POST): the fields the server owns (uniqueId, businessKey, the
 * registry's read-only fields such as CreationTime) are compared with the object as it is and dropped when
 * unchanged; a changed one is 400 naming it. Pure: the caller passes the rendered object.
 */

/** Fields of the rendered object that no body sets, besides the registry's read-only ones. */
const RENDERED_ONLY = new Set(['uniqueId', 'businessKey']);

export const isServerOwned = (type: ObjectType, name: string): boolean =>
  RENDERED_ONLY.has(name) || type.byName.get(name)?.readOnly === true;

/** True when the body names a field the server owns, so the caller fetches the current object only when needed. */
export const namesServerOwned = (type: ObjectType, body: unknown): boolean =>
  isPlainObject(body) && Object.keys(body).some((k) => isServerOwned(type, k));

/**
 * The body without its server-owned fields. `current` is the object as GET renders it (update); on create there is
 * none, so they are dropped, except a businessKey that names another object than `businessKey`.
 */
export function dropServerOwned(
  type: ObjectType,
  body: unknown,
  current: Record<string, unknown> | undefined,
  businessKey: string,
): unknown {
  const reference = current ?? (isPlainObject(body) ? { ...body, businessKey } : {});
  return dropUnchanged(body, reference, (k) => isServerOwned(type, k));
}

/** The body without the fields `owned` names; each must equal its value in `current`, else 400 naming it. */
export function dropUnchanged(
  body: unknown,
  current: Record<string, unknown>,
  owned: (field: string) => boolean,
): unknown {
  if (!isPlainObject(body)) return body;
  // Whatever it is named (`__proto__` too), a field passed on reaches the validator, which refuses it by name.
  const out = emptyRecord<unknown>();
  for (const [k, v] of Object.entries(body)) {
    const now = own(current, k) ?? null;
    if (!owned(k)) out[k] = v;
    else if (!isDeepStrictEqual(v, now))
      throw invalid(`Field "${k}" is read-only; it is ${clip(JSON.stringify(now))} and cannot be changed`);
  }
  return out;
}

const clip = (s: string): string => (s.length > 80 ? `${s.slice(0, 80)}…` : s);
