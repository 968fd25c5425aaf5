import { allTypes } from '../model/registry.ts';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../security/api-keys.ts';
import { hashPassword } from '../security/passwords.ts';
import { BUILTIN_ROLES, parseGrant } from '../security/privileges.ts';
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

  constructor(store: Store, clock: Clock, options: { maxKeyLifetimeMs: number }) {
    this.store = store;
    this.clock = clock;
    this.maxKeyLifetimeMs = options.maxKeyLifetimeMs;
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
    await this.store.upsertUser(user);
    return user;
  }

  async setPassword(name: string, password: string): Promise<void> {
    const user = await this.requireUser(name);
    if (password.length < 8) throw new AccountError('a password has at least 8 characters');
    await this.store.upsertUser({ ...user, passwordHash: await hashPassword(password) });
  }

  async setRoles(name: string, roles: string[]): Promise<User> {
    const user = await this.requireUser(name);
    await this.checkRoles(roles);
    const next = { ...user, roles };
    await this.store.upsertUser(next);
    return next;
  }

  async setDisabled(name: string, disabled: boolean): Promise<void> {
    const user = await this.requireUser(name);
    await this.store.upsertUser({ ...user, disabled });
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
    await this.store.upsertRole(role);
    return role;
  }

  async deleteRole(name: string): Promise<void> {
    const role = await this.store.getRole(name);
    if (!role) throw new AccountError(`no role ${name}`);
    if (role.builtin) throw new AccountError(`role ${name} is built in and cannot be deleted`);
    const holder = (await this.store.listUsers()).find((u) => u.roles.includes(name));
    if (holder) throw new AccountError(`role ${name} is still given to user ${holder.name}`);
    await this.store.deleteRole(name);
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
    await this.store.insertApiKey(record);
    return { key, record };
  }

  listApiKeys(userName?: string): Promise<ApiKey[]> {
    return this.store.listApiKeys(userName);
  }

  async revokeApiKey(id: string): Promise<void> {
    if (!(await this.store.revokeApiKey(id, this.clock.now()))) throw new AccountError(`no active API key ${id}`);
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
