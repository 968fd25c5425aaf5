import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { AccountService } from '../services/accounts.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import { systemClock } from '../time/clock.ts';

/**
 * User, role and API-key administration. These commands open the database directly (the data folder or
 * --database), so they work whether or not the server runs; the server sees changes within two seconds.
 */

interface DbFlags {
  data?: string;
  database?: string;
}

const withDb = (cmd: Command): Command =>
  cmd.option('--data <dir>', 'data folder (default ./data)').option('--database <url>', 'postgres:// URL');

async function withAccounts<T>(flags: DbFlags, fn: (accounts: AccountService, store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig({ data: flags.data, database: flags.database });
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    const accounts = new AccountService(store, systemClock, {
      maxKeyLifetimeMs: config.apiKeyMaxLifetimeMs,
      actor: cliActor(),
    });
    await accounts.ensureBuiltinRoles();
    return await fn(accounts, store);
  } finally {
    await store.close();
  }
}

/** The audit log's actor of a command run on the server's machine: the operating-system user (docs/architecture.md §18). */
export function cliActor() {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // A user id without a passwd entry (a container): the log says "unknown".
  }
  return { user, interface: 'cli' as const, address: null, apiKeyId: null };
}

const out = (line: string) => process.stdout.write(`${line}\n`);
const when = (ms: number | null) => (ms === null ? '-' : formatInstant(ms, 'UTC'));

const UNIT_MS = new Map([
  ['h', 3_600_000],
  ['d', 86_400_000],
  ['w', 7 * 86_400_000],
  ['mo', 30 * 86_400_000],
]);

/** `30d`, `12h`, `2w`, `6mo` → milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d{1,5})(h|d|w|mo)$/.exec(text);
  const unit = UNIT_MS.get(m?.[2] ?? '');
  if (!m || unit === undefined) throw new Error(`"${text}" is not a duration such as 12h, 30d, 2w or 6mo`);
  return Number(m[1]) * unit;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  // No encoding is set on stdin, so it yields Buffers.
  const input: AsyncIterable<Buffer> = process.stdin;
  for await (const c of input) chunks.push(c);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `millrace apikey …` and `millrace user …` (users, then roles), in the order help lists them. */
export function registerAccountCommands(program: Command): void {
  registerApiKeyCommands(program);
  const user = program.command('user').description('manage users and roles');
  registerUserCommands(user);
  registerRoleCommands(user);
}

function registerApiKeyCommands(program: Command): void {
  const apikey = program.command('apikey').description('create, list and revoke API keys');
  withDb(apikey.command('create').description('issue a key; it is printed once'))
    .requiredOption('--user <name>', 'user the key belongs to')
    .option('--description <text>', 'what the key is for', '')
    .option('--expires-in <duration>', 'lifetime such as 30d or 6mo (at most 6 months)')
    .action(async (f: DbFlags & { user: string; description: string; expiresIn?: string }) =>
      withAccounts(f, async (a) => {
        const { key, record } = await a.createApiKey(f.user, {
          description: f.description,
          ...(f.expiresIn ? { lifetimeMs: parseDuration(f.expiresIn) } : {}),
        });
        out(`id:      ${record.id}`);
        out(`expires: ${when(record.expiryTime)}`);
        out(`key:     ${key}`);
      }),
    );
  withDb(apikey.command('list').description('list keys (never the keys themselves)'))
    .option('--user <name>', 'only this user’s keys')
    .action(async (f: DbFlags & { user?: string }) =>
      withAccounts(f, async (a) => {
        out(['ID', 'USER', 'CREATED', 'EXPIRES', 'LAST USED', 'REVOKED', 'DESCRIPTION'].join('\t'));
        for (const k of await a.listApiKeys(f.user))
          out(
            [
              k.id,
              k.userName,
              when(k.creationTime),
              when(k.expiryTime),
              when(k.lastUsedTime),
              when(k.revokedTime),
              k.description,
            ].join('\t'),
          );
      }),
    );
  withDb(apikey.command('revoke <id>').description('revoke a key at once')).action(async (id: string, f: DbFlags) =>
    withAccounts(f, async (a) => {
      await a.revokeApiKey(id);
      out(`revoked ${id}`);
    }),
  );
}

function registerUserCommands(user: Command): void {
  withDb(user.command('add <name>').description('add a user'))
    .option('--password <password>', 'password for basic authentication')
    .option('--password-stdin', 'read the password from standard input')
    .option('--role <role>', 'role to give (repeatable): Administrator, Operator, Viewer or a custom one', collect, [])
    .action(async (name: string, f: DbFlags & { password?: string; passwordStdin?: boolean; role: string[] }) => {
      const password = f.passwordStdin ? await readStdin() : f.password;
      await withAccounts(f, async (a) => {
        await a.addUser(name, { roles: f.role, ...(password ? { password } : {}) });
        out(`added user ${name} with roles ${f.role.join(', ') || '(none)'}`);
      });
    });
  withDb(user.command('list').description('list users')).action(async (f: DbFlags) =>
    withAccounts(f, async (a) => {
      out(['USER', 'ROLES', 'PASSWORD', 'DISABLED'].join('\t'));
      for (const u of await a.listUsers())
        out([u.name, u.roles.join(','), u.passwordHash ? 'set' : '-', u.disabled ? 'yes' : 'no'].join('\t'));
    }),
  );
  withDb(user.command('passwd <name>').description('set a user’s password'))
    .option('--password <password>', 'the new password')
    .option('--password-stdin', 'read it from standard input')
    .action(async (name: string, f: DbFlags & { password?: string; passwordStdin?: boolean }) => {
      const password = f.passwordStdin ? await readStdin() : f.password;
      if (!password) throw new Error('give --password or --password-stdin');
      await withAccounts(f, async (a) => {
        await a.setPassword(name, password);
        out(`password of ${name} changed`);
      });
    });
  withDb(user.command('roles <name> [roles...]').description('replace the roles of a user')).action(
    async (name: string, roles: string[], f: DbFlags) =>
      withAccounts(f, async (a) => {
        const u = await a.setRoles(name, roles);
        out(`${u.name}: ${u.roles.join(', ') || '(no roles)'}`);
      }),
  );
  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const)
    withDb(user.command(`${verb} <name>`).description(`${verb} a user (its keys stop or start working)`)).action(
      async (name: string, f: DbFlags) =>
        withAccounts(f, async (a) => {
          await a.setDisabled(name, disabled);
          out(`${name} ${verb}d`);
        }),
    );
}

function registerRoleCommands(user: Command): void {
  withDb(user.command('role-set <role>').description('create or replace a custom role'))
    .option(
      '--grant <grant>',
      'Type:Partition:Privilege[,Privilege…], * for any type or partition (repeatable)',
      collect,
      [],
    )
    .option('--description <text>', 'what the role is for', '')
    .action(async (role: string, f: DbFlags & { grant: string[]; description: string }) =>
      withAccounts(f, async (a) => {
        const r = await a.putRole(role, f.grant, f.description);
        out(`role ${r.name}: ${r.grants.map((g) => `${g.type}:${g.partition}:${g.privileges.join(',')}`).join(' ')}`);
      }),
    );
  withDb(user.command('role-list').description('list roles and their grants')).action(async (f: DbFlags) =>
    withAccounts(f, async (a) => {
      for (const r of await a.listRoles())
        out(
          `${r.name}${r.builtin ? ' (built in)' : ''}\t${r.grants.map((g) => `${g.type}:${g.partition}:${g.privileges.join(',')}`).join(' ')}`,
        );
    }),
  );
  withDb(user.command('role-delete <role>').description('delete a custom role no user holds')).action(
    async (role: string, f: DbFlags) =>
      withAccounts(f, async (a) => {
        await a.deleteRole(role);
        out(`deleted role ${role}`);
      }),
  );
}
