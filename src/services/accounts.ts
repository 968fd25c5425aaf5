import { allTypes } from '../model/registry.ts';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../security/api-keys.ts';
import { hashPassword } from '../security/passwords.ts';
import { BUILTIN_ROLES, parseGrant } from '../security/privileges.ts';
import { auditDiff } from '../model/audit-diff.ts';
import type { AuditActor } from '../store/audit-store.ts';
import type { ApiKey, Role, Store, User } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';

/** A mistake in a management command (unknown user, bad grant…); the CLI prints it and exits non-zero. */
export class AccountError extends Error {}

const USER_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;
const ROLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Users, roles and API keys: what `millrace user …` and `millrace apikey …` manage. */
export class AccountService {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly maxKeyLifetimeMs: number;
  /** Who the audit log names for these changes (docs/architecture.md §18): the server itself unless told. */
  private readonly actor: AuditActor;

  constructor(store: Store, clock: Clock, options: { maxKeyLifetimeMs: number; actor?: AuditActor }) {
    this.store = store;
    this.clock = clock;
    this.maxKeyLifetimeMs = options.maxKeyLifetimeMs;
    this.actor = options.actor ?? { user: 'system', interface: 'system', address: null, apiKeyId: null };
  }

  /** Writes an account change with its audit entry in one transaction; `before`/`after` as the log shows them. */
  private audited(
    action: string,
    object: { type: 'User' | 'Role' | 'ApiKey'; key: string },
    sides: { before?: Record<string, unknown>; after?: Record<string, unknown> },
    write: (tx: Store) => Promise<unknown>,
  ): Promise<void> {
    return this.store.transaction(async (tx) => {
      await write(tx);
      await tx.audit.add({
        time: this.clock.now(),
        actor: this.actor,
        action,
        object: { ...object, uniqueId: null },
        detail: null,
        diff: auditDiff(object.type, sides.before, sides.after),
        restore: null,
      });
    });
  }

  async ensureBuiltinRoles(): Promise<void> {
    for (const role of BUILTIN_ROLES) if (!(await this.store.getRole(role.name))) await this.store.upsertRole(role);
  }

  async addUser(name: string, options: { password?: string; roles: string[] }): Promise<User> {
    if (!USER_NAME.test(name)) throw new AccountError(`"${name}" is not a user name (letters, digits, _ . @ -)`);
    if (await this.store.getUser(name)) throw new AccountError(`user ${name} exists already`);
    await this.checkRoles(options.roles);
    const user: User = {
      name,
      passwordHash: options.password ? await hashPassword(options.password) : null,
      roles: options.roles,
      disabled: false,
      creationTime: this.clock.now(),
    };
    await this.audited('create', { type: 'User', key: name }, { after: userSide(user) }, (tx) => tx.upsertUser(user));
    return user;
  }

  async setPassword(name: string, password: string): Promise<void> {
    const user = await this.requireUser(name);
    if (password.length < 8) throw new AccountError('a password has at least 8 characters');
    const next = { ...user, passwordHash: await hashPassword(password) };
    await this.audited('update', { type: 'User', key: name }, { before: userSide(user), after: userSide(next) }, (tx) =>
      tx.upsertUser(next),
    );
  }

  async setRoles(name: string, roles: string[]): Promise<User> {
    const user = await this.requireUser(name);
    await this.checkRoles(roles);
    const next = { ...user, roles };
    await this.audited('update', { type: 'User', key: name }, { before: userSide(user), after: userSide(next) }, (tx) =>
      tx.upsertUser(next),
    );
    return next;
  }

  async setDisabled(name: string, disabled: boolean): Promise<void> {
    const user = await this.requireUser(name);
    const next = { ...user, disabled };
    await this.audited('update', { type: 'User', key: name }, { before: userSide(user), after: userSide(next) }, (tx) =>
      tx.upsertUser(next),
    );
  }

  listUsers(): Promise<User[]> {
    return this.store.listUsers();
  }

  /** Creates or replaces a custom role from grants written `Type:Partition:Priv[,Priv…]`. */
  async putRole(name: string, grantTexts: string[], description = ''): Promise<Role> {
    if (!ROLE_NAME.test(name)) throw new AccountError(`"${name}" is not a role name`);
    const existing = await this.store.getRole(name);
    if (existing?.builtin) throw new AccountError(`role ${name} is built in and cannot be changed`);
    const known = new Set<string>(allTypes().map((t) => t.name));
    const grants = grantTexts.map((text) => {
      const g = parseGrant(text, known);
      if (typeof g === 'string') throw new AccountError(g);
      return g;
    });
    const role: Role = { name, description, grants, builtin: false };
    const sides = { ...(existing ? { before: roleSide(existing) } : {}), after: roleSide(role) };
    await this.audited(existing ? 'update' : 'create', { type: 'Role', key: name }, sides, (tx) => tx.upsertRole(role));
    return role;
  }

  async deleteRole(name: string): Promise<void> {
    const role = await this.store.getRole(name);
    if (!role) throw new AccountError(`no role ${name}`);
    if (role.builtin) throw new AccountError(`role ${name} is built in and cannot be deleted`);
    const holder = (await this.store.listUsers()).find((u) => u.roles.includes(name));
    if (holder) throw new AccountError(`role ${name} is still given to user ${holder.name}`);
    await this.audited('delete', { type: 'Role', key: name }, { before: roleSide(role) }, (tx) => tx.deleteRole(name));
  }

  listRoles(): Promise<Role[]> {
    return this.store.listRoles();
  }

  /**
   * Issues a key for a user. The key is returned once and only its SHA-256 is kept. `key` lets the first
   * start take MILLRACE_ADMIN_API_KEY instead of a random one.
   */
  async createApiKey(
    userName: string,
    options: { description?: string; lifetimeMs?: number; key?: string },
  ): Promise<{ key: string; record: ApiKey }> {
    await this.requireUser(userName);
    const lifetime = options.lifetimeMs ?? this.maxKeyLifetimeMs;
    if (!(lifetime > 0) || lifetime > this.maxKeyLifetimeMs)
      throw new AccountError(`a key lives at most ${Math.floor(this.maxKeyLifetimeMs / 86_400_000)} days`);
    const key = options.key ?? generateApiKey();
    if (key.length < 16 || key.length > 512) throw new AccountError('an API key has 16 to 512 characters');
    const now = this.clock.now();
    const record: ApiKey = {
      id: generateApiKeyId(),
      userName,
      keyHash: hashApiKey(key),
      description: options.description ?? '',
      creationTime: now,
      expiryTime: now + lifetime,
      lastUsedTime: null,
      revokedTime: null,
    };
    await this.audited('create', { type: 'ApiKey', key: record.id }, { after: keySide(record) }, (tx) =>
      tx.insertApiKey(record),
    );
    return { key, record };
  }

  listApiKeys(userName?: string): Promise<ApiKey[]> {
    return this.store.listApiKeys(userName);
  }

  async revokeApiKey(id: string): Promise<void> {
    const now = this.clock.now();
    await this.audited(
      'revoke',
      { type: 'ApiKey', key: id },
      { before: { Revoked: null }, after: { Revoked: now } },
      async (tx) => {
        if (!(await tx.revokeApiKey(id, now))) throw new AccountError(`no active API key ${id}`);
      },
    );
  }

  private async requireUser(name: string): Promise<User> {
    const user = await this.store.getUser(name);
    if (!user) throw new AccountError(`no user ${name}`);
    return user;
  }

  private async checkRoles(roles: string[]): Promise<void> {
    for (const r of roles) if (!(await this.store.getRole(r))) throw new AccountError(`no role ${r}`);
  }
}

/** A user as the audit log shows it: the password only as whether one is set (masked when it changes). */
const userSide = (u: User): Record<string, unknown> => ({
  Roles: u.roles,
  Disabled: u.disabled,
  Password: u.passwordHash,
});

const roleSide = (r: Role): Record<string, unknown> => ({ Description: r.description, Grants: r.grants });

/** A key as the audit log shows it: never the key nor its hash. */
const keySide = (k: ApiKey): Record<string, unknown> => ({
  User: k.userName,
  Description: k.description,
  Expires: k.expiryTime,
});
