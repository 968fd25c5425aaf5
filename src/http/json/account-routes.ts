import type { FastifyInstance } from 'fastify';
import { conflict, forbidden, invalid, MillraceError } from '../../errors.ts';
import { auditActor, type Principal } from '../../security/privileges.ts';
import {
  namePage,
  readApiKeyBody,
  readUserBody,
  renderApiKey,
  renderRole,
  renderUser,
} from '../../services/account-bodies.ts';
import { ADMINISTRATOR, AccountError, type AccountService } from '../../services/accounts.ts';
import type { Authenticator } from '../../services/auth.ts';
import { PAGE_PARAMS, readPage, readParams } from '../../services/list-query.ts';
import { authorizeFirst } from '../authorize-first.ts';
import { errorResponses } from './schemas.ts';

export interface AccountRouteDeps {
  accounts: AccountService;
  auth: Authenticator;
  /** Times in answers are written in this zone, as every date of the JSON interface. */
  defaultTimeZone: string;
}

const ADMIN_ONLY = 'Managing users, roles and API keys is a privilege of the Administrator role';
const onlyAdministrators = authorizeFirst((req) => {
  if (!(req.principal as Principal).roles.includes(ADMINISTRATOR)) throw forbidden(ADMIN_ONLY);
});

/** The service naming the request's user, key and address in the audit log (docs/architecture.md §18). */
const byRequest = (accounts: AccountService, req: { principal?: unknown }): AccountService =>
  accounts.as(auditActor(req.principal as Principal));

/** An AccountError in the interface's error record: 400, 404 or 409 by its kind. */
async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!(e instanceof AccountError)) throw e;
    if (e.kind === 'missing') throw new MillraceError(404, 'NOT_FOUND', e.message);
    throw e.kind === 'conflict' ? conflict(e.message) : invalid(e.message);
  }
}

const date = { type: 'string', description: 'Date written "YYYY/MM/DD HH:MM:SS,mmm <IANA zone>"' };
const USER = {
  type: 'object',
  properties: {
    Name: { type: 'string' },
    Roles: { type: 'array', items: { type: 'string' } },
    Disabled: { type: 'boolean' },
    PasswordSet: { type: 'boolean', description: 'Whether the user has a password (never shown)' },
    CreationTime: date,
  },
};
const USER_BODY = {
  type: 'object',
  properties: {
    Roles: { type: 'array', maxItems: 100, items: { type: 'string' }, description: 'Role names, e.g. Operator' },
    Disabled: { type: 'boolean', description: 'A disabled user cannot sign in nor use its keys' },
    Password: { type: 'string', minLength: 8, maxLength: 1024, writeOnly: true },
  },
  additionalProperties: false,
};
const ROLE = {
  type: 'object',
  properties: {
    Name: { type: 'string' },
    Description: { type: 'string' },
    BuiltIn: { type: 'boolean' },
    Grants: { type: 'array', items: { type: 'string', description: 'Type:Partition:Privilege[,Privilege…]' } },
  },
};
const KEY = {
  type: 'object',
  properties: {
    Id: { type: 'string' },
    Description: { type: 'string' },
    Created: date,
    Expires: date,
    LastUsed: { ...date, nullable: true },
  },
};
const page = (item: Record<string, unknown>) => ({
  type: 'object',
  properties: {
    items: { type: 'array', items: item },
    next: { type: 'string', nullable: true, description: 'Cursor of the next page (pass it as After)' },
  },
  required: ['items', 'next'],
});
const LIST_QUERY = {
  type: 'object',
  properties: Object.fromEntries(
    PAGE_PARAMS.map((p) => [p.name, { type: 'string', ...(p.schema ?? {}), description: p.description }]),
  ),
};
const nameParams = (extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { name: { type: 'string', description: 'User name' }, ...extra },
  required: ['name', ...Object.keys(extra)],
});
const tags = ['User'];

type NameRequest = { Params: { name: string }; Body: unknown };

/**
 * Users, roles and API keys over the JSON interface, for administrators only (docs/architecture.md §10), through
 * the same AccountService as the CLI.
 */
export function registerAccountRoutes(
  app: FastifyInstance,
  deps: AccountRouteDeps,
  served: Map<string, Set<string>>,
): void {
  registerLists(app, deps, served);
  registerUserRoutes(app, deps, served);
  registerKeyRoutes(app, deps, served);
}

/** A route's options: administrators only (checked before the body is read), and its documentation. */
const routeOptions = (summary: string, response: Record<number, unknown>, extra: Record<string, unknown> = {}) => ({
  preParsing: onlyAdministrators,
  schema: { tags, summary, ...extra, response },
});

/** The user of that name; 404 when there is none. */
const requireUser = (accounts: AccountService, name: string) =>
  answering(async () => {
    const u = await accounts.getUser(name);
    if (!u) throw new AccountError(`no user ${name}`, 'missing');
    return u;
  });

/** `GET /User` and `GET /Role`. */
function registerLists(app: FastifyInstance, deps: AccountRouteDeps, served: Map<string, Set<string>>): void {
  const { accounts } = deps;
  const zone = deps.defaultTimeZone;
  served.set('/User', new Set(['GET']));
  app.get<{ Querystring: unknown }>('/User', {
    ...routeOptions(
      'List the users, by name',
      { 200: page(USER), ...errorResponses(400, 401, 403) },
      { querystring: LIST_QUERY },
    ),
    handler: async (req) => {
      const p = readPage(readParams(req.query, PAGE_PARAMS), 'k');
      return namePage(byName((await accounts.listUsers()).map((u) => renderUser(u, zone))), p);
    },
  });
  served.set('/Role', new Set(['GET']));
  app.get<{ Querystring: unknown }>('/Role', {
    ...routeOptions(
      'List the roles and their grants, by name',
      { 200: page(ROLE), ...errorResponses(400, 401, 403) },
      { querystring: LIST_QUERY },
    ),
    handler: async (req) => {
      const p = readPage(readParams(req.query, PAGE_PARAMS), 'k');
      return namePage(byName((await accounts.listRoles()).map(renderRole)), p);
    },
  });
}

/** `/User/<name>`: read, create, change and delete a user. */
function registerUserRoutes(app: FastifyInstance, deps: AccountRouteDeps, served: Map<string, Set<string>>): void {
  const { accounts, auth } = deps;
  const zone = deps.defaultTimeZone;
  const one = '/User/:name';
  served.set(one, new Set(['GET', 'POST', 'PUT', 'DELETE']));
  const params = nameParams();
  app.get<NameRequest>(one, {
    ...routeOptions('Read a user (never its password)', { 200: USER, ...errorResponses(401, 403, 404) }, { params }),
    handler: async (req) => renderUser(await requireUser(accounts, req.params.name), zone),
  });
  app.post<NameRequest>(one, {
    ...routeOptions(
      'Create a user',
      { 201: USER, ...errorResponses(400, 401, 403, 409, 413, 415) },
      { params, body: USER_BODY },
    ),
    handler: async (req, reply) => {
      const change = readUserBody(req.body);
      const created = await answering(() =>
        byRequest(accounts, req).addUser(req.params.name, {
          roles: change.roles ?? [],
          ...(change.password !== undefined ? { password: change.password } : {}),
          ...(change.disabled !== undefined ? { disabled: change.disabled } : {}),
        }),
      );
      return reply.code(201).send(renderUser(created, zone));
    },
  });
  app.put<NameRequest>(one, {
    ...routeOptions(
      'Change a user: the fields given are set; disabling it or a new password ends its sessions',
      { 200: USER, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      { params, body: USER_BODY },
    ),
    handler: async (req) => {
      const change = readUserBody(req.body);
      const changed = await answering(() => byRequest(accounts, req).updateUser(req.params.name, change));
      auth.forgetUser(changed.name);
      return renderUser(changed, zone);
    },
  });
  app.delete<NameRequest>(one, {
    ...routeOptions(
      'Delete a user with its API keys and sessions',
      { 204: { type: 'null', description: 'Deleted; no body' }, ...errorResponses(401, 403, 404, 409) },
      { params },
    ),
    handler: async (req, reply) => {
      await answering(() => byRequest(accounts, req).deleteUser(req.params.name));
      auth.forgetUser(req.params.name);
      return reply.code(204).send();
    },
  });
}

/** `/User/<name>/apikeys`: a user's keys in use, a new key (shown once), a key revoked. */
function registerKeyRoutes(app: FastifyInstance, deps: AccountRouteDeps, served: Map<string, Set<string>>): void {
  const { accounts, auth } = deps;
  const zone = deps.defaultTimeZone;
  const params = nameParams();
  const keys = '/User/:name/apikeys';
  served.set(keys, new Set(['GET', 'POST']));
  app.get<NameRequest>(keys, {
    ...routeOptions(
      "The user's API keys in use, oldest first (never the keys themselves)",
      { 200: page(KEY), ...errorResponses(401, 403, 404) },
      { params },
    ),
    handler: async (req) => {
      const u = await requireUser(accounts, req.params.name);
      const live = (await accounts.listApiKeys(u.name)).filter((k) => k.revokedTime === null);
      return { items: live.map((k) => renderApiKey(k, zone)), next: null };
    },
  });
  app.post<NameRequest>(keys, {
    ...routeOptions(
      'Issue an API key for the user; the key is in this answer only',
      {
        201: {
          type: 'object',
          properties: { Id: { type: 'string' }, Key: { type: 'string' }, Expires: date },
        },
        ...errorResponses(400, 401, 403, 404, 413, 415),
      },
      {
        params,
        body: {
          type: 'object',
          properties: {
            Description: { type: 'string', maxLength: 200 },
            ExpiresInDays: { type: 'integer', minimum: 1, maximum: accounts.maxKeyDays },
          },
          additionalProperties: false,
        },
      },
    ),
    handler: async (req, reply) => {
      const wanted = readApiKeyBody(req.body, accounts.maxKeyDays);
      const { key, record } = await answering(() => byRequest(accounts, req).createApiKey(req.params.name, wanted));
      return reply.code(201).send({ Id: record.id, Key: key, Expires: renderApiKey(record, zone).Expires });
    },
  });
  const oneKey = '/User/:name/apikeys/:id';
  served.set(oneKey, new Set(['DELETE']));
  app.delete<{ Params: { name: string; id: string } }>(oneKey, {
    ...routeOptions(
      'Revoke an API key of the user at once',
      { 204: { type: 'null', description: 'Revoked; no body' }, ...errorResponses(401, 403, 404) },
      { params: nameParams({ id: { type: 'string', description: 'The key id' } }) },
    ),
    handler: async (req, reply) => {
      await answering(() => byRequest(accounts, req).revokeApiKey(req.params.id, req.params.name));
      auth.forgetUser(req.params.name);
      return reply.code(204).send();
    },
  });
}

/** In name order by code unit, the order the After cursor compares in. */
const byName = (items: Array<Record<string, unknown>>) =>
  items.sort((a, b) => (String(a.Name) < String(b.Name) ? -1 : String(a.Name) > String(b.Name) ? 1 : 0));
