import { invalid } from '../errors.ts';
import { isPlainObject } from '../domain/json.ts';
import type { ApiKey, Role, User } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import type { UserChange } from './accounts.ts';
import { type ListAnswer, encodeCursor, type Page } from './list-query.ts';
import { selectFields } from './job-render.ts';

/**
 * The JSON interface's bodies and answers for users, roles and API keys (docs/architecture.md §10): reading a body
 * checks every field and refuses anything else (400 naming it) before anything is changed. Pure: no I/O.
 */

const USER_FIELDS = ['Roles', 'Disabled', 'Password'] as const;
const KEY_FIELDS = ['Description', 'ExpiresInDays'] as const;
const MAX_ROLES = 100;

/** The fields of a body, refusing one that is not a JSON object or names a field outside `known`. */
function fieldsOf(body: unknown, what: string, known: readonly string[]): Record<string, unknown> {
  if (body === undefined) return {};
  if (!isPlainObject(body)) throw invalid(`The body of ${what} must be a JSON object`);
  for (const name of Object.keys(body))
    if (!known.includes(name)) throw invalid(`Unknown field "${name}"; ${what} takes ${known.join(', ')}`);
  return body;
}

/** A User body (`{"Roles": […], "Disabled": false, "Password": "…"}`) as a change; every field is optional. */
export function readUserBody(body: unknown): UserChange {
  const fields = fieldsOf(body, 'a User', USER_FIELDS);
  const change: UserChange = {};
  if (Object.hasOwn(fields, 'Roles')) {
    const roles = fields.Roles;
    if (!Array.isArray(roles) || roles.length > MAX_ROLES || !roles.every((r) => typeof r === 'string'))
      throw invalid(`Field "Roles" must be a list of at most ${MAX_ROLES} role names`);
    const names = roles as string[];
    const twice = names.find((r, i) => names.indexOf(r) !== i);
    if (twice !== undefined) throw invalid(`Field "Roles" names role "${twice}" twice`);
    change.roles = names;
  }
  if (Object.hasOwn(fields, 'Disabled')) {
    if (typeof fields.Disabled !== 'boolean') throw invalid('Field "Disabled" must be true or false');
    change.disabled = fields.Disabled;
  }
  if (Object.hasOwn(fields, 'Password')) {
    const password = fields.Password;
    if (typeof password !== 'string' || password.length < 8 || password.length > 1024)
      throw invalid('Field "Password" must be text of 8 to 1024 characters');
    change.password = password;
  }
  return change;
}

/** An API key body (`{"Description": "…", "ExpiresInDays": n}`), both optional; days from 1 to `maxDays`. */
export function readApiKeyBody(body: unknown, maxDays: number): { description: string; lifetimeMs?: number } {
  const fields = fieldsOf(body, 'an API key', KEY_FIELDS);
  const description = fields.Description ?? '';
  if (typeof description !== 'string' || description.length > 200)
    throw invalid('Field "Description" must be text of at most 200 characters');
  if (!Object.hasOwn(fields, 'ExpiresInDays')) return { description };
  const days = fields.ExpiresInDays;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > maxDays)
    throw invalid(`Field "ExpiresInDays" must be a whole number of days from 1 to ${maxDays}`);
  return { description, lifetimeMs: days * 86_400_000 };
}

export const renderUser = (u: User, zone: string): Record<string, unknown> => ({
  Name: u.name,
  Roles: u.roles,
  Disabled: u.disabled,
  PasswordSet: u.passwordHash !== null,
  CreationTime: formatInstant(u.creationTime, zone),
});

export const renderRole = (r: Role): Record<string, unknown> => ({
  Name: r.name,
  Description: r.description,
  BuiltIn: r.builtin,
  Grants: r.grants.map((g) => `${g.type}:${g.partition}:${g.privileges.join(',')}`),
});

/** A key as listed: never the key, nor its hash. */
export const renderApiKey = (k: ApiKey, zone: string): Record<string, unknown> => ({
  Id: k.id,
  Description: k.description,
  Created: formatInstant(k.creationTime, zone),
  Expires: formatInstant(k.expiryTime, zone),
  LastUsed: k.lastUsedTime === null ? null : formatInstant(k.lastUsedTime, zone),
});

/** One page of items in name order, after the page's cursor (a name), as every list answers. */
export function namePage(items: ReadonlyArray<Record<string, unknown>>, page: Page): ListAnswer {
  const rest = page.after === undefined ? items : items.filter((i) => String(i.Name) > (page.after as string));
  const shown = rest.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    items: shown.map((i) => selectFields(i, page.fields)),
    next: rest.length > page.limit && last ? encodeCursor('k', String(last.Name)) : null,
  };
}
