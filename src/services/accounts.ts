import { allTypes } from '../model/registry.ts';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../security/api-keys.ts';
import { hashPassword } from '../security/passwords.ts';
import { BUILTIN_ROLES, parseGrant } from '../security/privileges.ts';
import { auditDiff } from '../model/audit-diff.ts';
import { type AuditActor, SYSTEM_ACTOR } from '../store/audit-store.ts';
import type { ApiKey, Role, Store, User } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';

/** What kind of mistake an AccountError is: the JSON interface answers 400, 404 or 409 for it. */
export type AccountErrorKind = 'invalid' | 'missing' | 'conflict';

/**
 * A mistake in a management command or request (unknown user, bad grant…); the CLI prints it and exits non-zero,
 * the JSON interface answers it in its error record.
 */
export class AccountError extends Error {
  readonly kind: AccountErrorKind;
  constructor(message: string, kind: AccountErrorKind = 'invalid') {
    super(message);
    this.kind = kind;
  }
}

/** The built-in role whose holders administer users, roles and keys. */
export const ADMINISTRATOR = 'Administrator';

/** A change to a user: each field given is set; `password` is stored as its scrypt hash only. */
export interface UserChange {
  roles?: string[];
  disabled?: boolean;
  password?: string;
}

/** A user that is enabled and holds the Administrator role. */
export const isAdministrator = (u: User): boolean => !u.disabled && u.roles.includes(ADMINISTRATOR);

const USER_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;
const ROLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * Users, roles and API keys: what `millrace user …`, `millrace apikey …` and the JSON interface's `/User`, `/Role`
 * routes manage, through these methods only (docs/architecture.md §10). A user disabled, deleted or given another
 * password loses its dashboard sessions in the same transaction; the last enabled administrator cannot be
 * disabled, demoted or deleted.
 */
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
    this.actor = options.actor ?? SYSTEM_ACTOR;
  }

  /** The same service naming another actor in the audit log: a request's user (docs/architecture.md §18). */
  as(actor: AuditActor): AccountService {
    return new AccountService(this.store, this.clock, { maxKeyLifetimeMs: this.maxKeyLifetimeMs, actor });
  }

  /**
   * Runs an account change and writes its audit entry in the same transaction. `change` answers its result and the
   * object's sides before and after, as the log shows them (read inside the transaction, after any lock).
   */
  private audited<T>(
    action: string,
    object: { type: 'User' | 'Role' | 'ApiKey'; key: string },
    change: (tx: Store) => Promise<{ result: T; before?: Record<string, unknown>; after?: Record<string, unknown> }>,
  ): Promise<T> {
    return this.store.transaction(async (tx) => {
      const { result, before, after } = await change(tx);
      await tx.audit.add({
        time: this.clock.now(),
        actor: this.actor,
        action,
        object: { ...object, uniqueId: null },
        detail: null,
        diff: auditDiff(object.type, before, after),
        restore: null,
      });
      return result;
    });
  }

  /** The longest lifetime a key may be given, in whole days. */
  get maxKeyDays(): number {
    return Math.floor(this.maxKeyLifetimeMs / 86_400_000);
  }

  async ensureBuiltinRoles(): Promise<void> {
    for (const role of BUILTIN_ROLES) if (!(await this.store.getRole(role.name))) await this.store.upsertRole(role);
  }

  async addUser(name: string, options: { password?: string; roles: string[]; disabled?: boolean }): Promise<User> {
    if (!USER_NAME.test(name)) throw new AccountError(`"${name}" is not a user name (letters, digits, _ . @ -)`);
    await this.checkRoles(options.roles);
    const user: User = {
      name,
      passwordHash: options.password ? await hashPassword(options.password) : null,
      roles: options.roles,
      disabled: options.disabled ?? false,
      creationTime: this.clock.now(),
    };
    return this.audited('create', { type: 'User', key: name }, async (tx) => {
      if (await tx.getUser(name)) throw new AccountError(`user ${name} exists already`, 'conflict');
      await tx.upsertUser(user);
      return { result: user, after: userSide(user) };
    });
  }

  getUser(name: string): Promise<User | undefined> {
    return this.store.getUser(name);
  }

  /**
   * Sets the fields of `change` that are given, in one transaction. Refused (409) when it would leave no enabled
   * administrator; ends the user's sessions when it disables the user or sets a password.
   */
  async updateUser(name: string, change: UserChange): Promise<User> {
    if (change.password !== undefined && change.password.length < 8)
      throw new AccountError('a password has at least 8 characters');
    if (change.roles) await this.checkRoles(change.roles);
    const passwordHash = change.password === undefined ? undefined : await hashPassword(change.password);
    return this.audited('update', { type: 'User', key: name }, async (tx) => {
      await tx.lockUsers();
      const user = await this.requireUser(name, tx);
      const next: User = {
        ...user,
        ...(change.roles ? { roles: change.roles } : {}),
        ...(change.disabled !== undefined ? { disabled: change.disabled } : {}),
        ...(passwordHash !== undefined ? { passwordHash } : {}),
      };
      if (isAdministrator(user) && !isAdministrator(next)) await this.keepAnAdministrator(tx, name);
      await tx.upsertUser(next);
      if ((next.disabled && !user.disabled) || passwordHash !== undefined) await tx.sessions.deleteForUser(name);
      return { result: next, before: userSide(user), after: userSide(next) };
    });
  }

  /** Removes a user, its API keys and its sessions; 409 for the last enabled administrator. */
  async deleteUser(name: string): Promise<void> {
    await this.audited('delete', { type: 'User', key: name }, async (tx) => {
      await tx.lockUsers();
      const user = await this.requireUser(name, tx);
      if (isAdministrator(user)) await this.keepAnAdministrator(tx, name);
      await tx.deleteUser(name);
      await tx.sessions.deleteForUser(name);
      return { result: undefined, before: userSide(user) };
    });
  }

  async setPassword(name: string, password: string): Promise<void> {
    await this.updateUser(name, { password });
  }

  setRoles(name: string, roles: string[]): Promise<User> {
    return this.updateUser(name, { roles });
  }

  async setDisabled(name: string, disabled: boolean): Promise<void> {
    await this.updateUser(name, { disabled });
  }

  listUsers(): Promise<User[]> {
    return this.store.listUsers();
  }

  /** Creates or replaces a custom role from grants written `Type:Partition:Priv[,Priv…]`. */
  async putRole(name: string, grantTexts: string[], description = ''): Promise<Role> {
    if (!ROLE_NAME.test(name)) throw new AccountError(`"${name}" is not a role name`);
    const existing = await this.store.getRole(name);
    if (existing?.builtin) throw new AccountError(`role ${name} is built in and cannot be changed`, 'conflict');
    const known = new Set<string>(allTypes().map((t) => t.name));
    const grants = grantTexts.map((text) => {
      const g = parseGrant(text, known);
      if (typeof g === 'string') throw new AccountError(g);
      return g;
    });
    const role: Role = { name, description, grants, builtin: false };
    const sides = { ...(existing ? { before: roleSide(existing) } : {}), after: roleSide(role) };
    await this.audited(existing ? 'update' : 'create', { type: 'Role', key: name }, async (tx) => {
      await tx.upsertRole(role);
      return { result: undefined, ...sides };
    });
    return role;
  }

  async deleteRole(name: string): Promise<void> {
    const role = await this.store.getRole(name);
    if (!role) throw new AccountError(`no role ${name}`, 'missing');
    if (role.builtin) throw new AccountError(`role ${name} is built in and cannot be deleted`);
    const holder = (await this.store.listUsers()).find((u) => u.roles.includes(name));
    if (holder) throw new AccountError(`role ${name} is still given to user ${holder.name}`);
    await this.audited('delete', { type: 'Role', key: name }, async (tx) => {
      await tx.deleteRole(name);
      return { result: undefined, before: roleSide(role) };
    });
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
    await this.audited('create', { type: 'ApiKey', key: record.id }, async (tx) => {
      await tx.insertApiKey(record);
      return { result: undefined, after: keySide(record) };
    });
    return { key, record };
  }

  listApiKeys(userName?: string): Promise<ApiKey[]> {
    return this.store.listApiKeys(userName);
  }

  /** Revokes a key at once; with `userName`, only a key of that user (another user's key is "no key"). */
  async revokeApiKey(id: string, userName?: string): Promise<void> {
    const now = this.clock.now();
    await this.audited('revoke', { type: 'ApiKey', key: id }, async (tx) => {
      const key = (await tx.listApiKeys(userName)).find((k) => k.id === id && k.revokedTime === null);
      if (!key || !(await tx.revokeApiKey(id, now))) throw new AccountError(`no active API key ${id}`, 'missing');
      return { result: undefined, before: { Revoked: null }, after: { Revoked: now } };
    });
  }

  private async requireUser(name: string, store: Store = this.store): Promise<User> {
    const user = await store.getUser(name);
    if (!user) throw new AccountError(`no user ${name}`, 'missing');
    return user;
  }

  /** Throws 409 unless an enabled administrator other than `leaving` remains. */
  private async keepAnAdministrator(tx: Store, leaving: string): Promise<void> {
    if (!(await tx.listUsers()).some((u) => u.name !== leaving && isAdministrator(u)))
      throw new AccountError(`${leaving} is the last enabled administrator: another must be made first`, 'conflict');
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
