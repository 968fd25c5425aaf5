// Users, roles and API keys (docs/architecture.md §10): plain rows, apart from the objects and the store's
// transaction plumbing; one implementation for both dialects.
import type { Kysely } from 'kysely';
import type { Database } from './tables.ts';
import type { ApiKey, Role, User } from './store.ts';

const toUser = (r: Database['users']): User => ({
  name: r.name,
  passwordHash: r.password_hash,
  roles: JSON.parse(r.roles),
  disabled: Number(r.disabled) !== 0,
  creationTime: Number(r.creation_time),
});

const toRole = (r: Database['roles']): Role => ({
  name: r.name,
  description: r.description,
  grants: JSON.parse(r.grants),
  builtin: Number(r.builtin) !== 0,
});

const toApiKey = (r: Database['api_keys']): ApiKey => ({
  id: r.id,
  userName: r.user_name,
  keyHash: r.key_hash,
  description: r.description,
  creationTime: Number(r.creation_time),
  expiryTime: Number(r.expiry_time),
  lastUsedTime: r.last_used_time === null ? null : Number(r.last_used_time),
  revokedTime: r.revoked_time === null ? null : Number(r.revoked_time),
});

/** The account rows of one Kysely database or transaction. */
export class KyselyAccounts {
  private readonly db: Kysely<Database>;
  private readonly dialect: 'sqlite' | 'postgres';
  private readonly inTransaction: (work: (db: Kysely<Database>) => Promise<void>) => Promise<void>;

  /** `inTransaction` runs its work in the store's transaction (a new one outside a transaction). */
  constructor(
    db: Kysely<Database>,
    dialect: 'sqlite' | 'postgres',
    inTransaction: (work: (db: Kysely<Database>) => Promise<void>) => Promise<void>,
  ) {
    this.db = db;
    this.dialect = dialect;
    this.inTransaction = inTransaction;
  }

  async getUser(name: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toUser(row) : undefined;
  }

  async listUsers(): Promise<User[]> {
    return (await this.db.selectFrom('users').selectAll().orderBy('name').execute()).map(toUser);
  }

  async upsertUser(user: User): Promise<void> {
    const values = {
      name: user.name,
      password_hash: user.passwordHash,
      roles: JSON.stringify(user.roles),
      disabled: user.disabled ? 1 : 0,
      creation_time: user.creationTime,
    };
    await this.db
      .insertInto('users')
      .values(values)
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({
          password_hash: values.password_hash,
          roles: values.roles,
          disabled: values.disabled,
        }),
      )
      .execute();
  }

  async deleteUser(name: string): Promise<void> {
    await this.inTransaction(async (db) => {
      await db.deleteFrom('api_keys').where('user_name', '=', name).execute();
      await db.deleteFrom('users').where('name', '=', name).execute();
    });
  }

  async lockUsers(): Promise<void> {
    if (this.dialect === 'postgres') await this.db.selectFrom('users').select('name').forUpdate().execute();
  }

  async getRole(name: string): Promise<Role | undefined> {
    const row = await this.db.selectFrom('roles').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toRole(row) : undefined;
  }

  async listRoles(): Promise<Role[]> {
    return (await this.db.selectFrom('roles').selectAll().orderBy('name').execute()).map(toRole);
  }

  async upsertRole(role: Role): Promise<void> {
    const values = {
      name: role.name,
      description: role.description,
      grants: JSON.stringify(role.grants),
      builtin: role.builtin ? 1 : 0,
    };
    await this.db
      .insertInto('roles')
      .values(values)
      .onConflict((oc) => oc.column('name').doUpdateSet({ description: values.description, grants: values.grants }))
      .execute();
  }

  async deleteRole(name: string): Promise<void> {
    await this.db.deleteFrom('roles').where('name', '=', name).execute();
  }

  async getApiKeyByHash(keyHash: string): Promise<ApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return row ? toApiKey(row) : undefined;
  }

  async listApiKeys(userName?: string): Promise<ApiKey[]> {
    let q = this.db.selectFrom('api_keys').selectAll();
    if (userName !== undefined) q = q.where('user_name', '=', userName);
    return (await q.orderBy('creation_time').orderBy('id').execute()).map(toApiKey);
  }

  async insertApiKey(key: ApiKey): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        user_name: key.userName,
        key_hash: key.keyHash,
        description: key.description,
        creation_time: key.creationTime,
        expiry_time: key.expiryTime,
        last_used_time: key.lastUsedTime,
        revoked_time: key.revokedTime,
      })
      .execute();
  }

  async revokeApiKey(id: string, at: number): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_time: at })
      .where('id', '=', id)
      .where('revoked_time', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async touchApiKeys(uses: ReadonlyArray<{ id: string; at: number }>): Promise<void> {
    if (uses.length === 0) return;
    await this.inTransaction(async (db) => {
      for (const use of uses)
        await db.updateTable('api_keys').set({ last_used_time: use.at }).where('id', '=', use.id).execute();
    });
  }
}
