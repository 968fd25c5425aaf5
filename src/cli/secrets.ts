import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { type Key, type Keyring, newKey, parseKeyring, readKeyring, toKey, writeKeyring } from '../security/keyring.ts';
import { keyFile } from '../security/secret-box.ts';
import { keyIdsInUse, resealSecrets } from '../services/secret-rotation.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/store.ts';

interface RotateFlags {
  data?: string;
  database?: string;
  newKeyEnv?: string;
  grace: string;
}

const out = (line: string) => process.stdout.write(`${line}\n`);

const HELP = `
Every secret field of every stored object (credential passwords, process server agent secrets) is decrypted and
encrypted again with a new key, in one database transaction: all or nothing.

Key in the data folder (<data>/secret.key, the default): the command makes a new key and, step by step, each
safe to interrupt and to run again:
  1. adds the new key to the key file (not yet the one that encrypts);
  2. re-encrypts every secret with it, in one transaction;
  3. makes it the key that encrypts;
  4. waits --grace seconds, re-encrypts what servers wrote with the old key meanwhile, and
  5. drops the old keys from the file once no stored value uses them.
Running servers keep working: they read the key file again when it changes.

Key in MILLRACE_SECRET_KEY: the command cannot change a server's environment, so give it the new key, base64 of
32 random bytes (e.g. \`openssl rand -base64 32\`), in an environment variable named by --new-key-env, and switch
the servers yourself. MILLRACE_SECRET_KEY may list several keys, comma-separated: the first encrypts, every one
decrypts. Without downtime:
  1. restart the servers with MILLRACE_SECRET_KEY="<new>,<old>";
  2. NEW_KEY=<new> millrace secrets rotate --new-key-env NEW_KEY   (MILLRACE_SECRET_KEY holding the old key)
  3. later, set MILLRACE_SECRET_KEY="<new>" and restart them.
Run again, it re-encrypts only what is not yet encrypted with the new key. No key is ever printed.

With several server nodes on one PostgreSQL database, every node must read the same keys (one shared key file or
the same MILLRACE_SECRET_KEY).`;

export function registerSecretCommands(program: Command): void {
  const secrets = program.command('secrets').description('manage the key that encrypts stored secrets');
  secrets
    .command('rotate')
    .description('re-encrypt every stored secret with a new key')
    .option('--data <dir>', 'data folder (default ./data)')
    .option('--database <url>', 'postgres:// URL')
    .option(
      '--new-key-env <name>',
      'environment variable holding the new key (base64, 32 bytes); required with MILLRACE_SECRET_KEY',
    )
    .option('--grace <seconds>', 'time running servers get to start using the new key before old keys are dropped', '5')
    .addHelpText('after', HELP)
    .action((flags: RotateFlags) => rotate(flags));
}

async function rotate(flags: RotateFlags): Promise<void> {
  const graceMs = Number(flags.grace) * 1000;
  if (!Number.isFinite(graceMs) || graceMs < 0) throw new Error('--grace must be a number of seconds');
  const given = flags.newKeyEnv ? keyFromEnv(flags.newKeyEnv) : undefined;
  const config = loadConfig({ data: flags.data, database: flags.database });
  const fromEnv = process.env.MILLRACE_SECRET_KEY;
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (fromEnv) {
      if (!given)
        throw new Error(
          'the key comes from MILLRACE_SECRET_KEY: give the new key with --new-key-env NAME (see --help)',
        );
      await rotateInEnvironment(store, parseKeyring(fromEnv), given);
    } else await rotateKeyFile(store, keyFile(config.dataDir), given ?? newKey(), graceMs);
  } finally {
    await store.close();
  }
}

function keyFromEnv(name: string): Key {
  const text = process.env[name];
  if (!text) throw new Error(`--new-key-env: the environment variable ${name} is not set`);
  try {
    return toKey(Buffer.from(text.trim(), 'base64'));
  } catch (err) {
    throw new Error(`--new-key-env: ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The five steps of the help text; every step leaves a state that a server and a second run both handle. */
async function rotateKeyFile(store: Store, file: string, next: Key, graceMs: number): Promise<void> {
  if (!existsSync(file)) throw new Error(`${file} does not exist: the server has never encrypted anything with it`);
  const before = readKeyring(file);
  const others = before.filter((k) => k.id !== next.id);
  if (before[0]?.id !== next.id) writeKeyring(file, [...others, next]);
  const count = await resealSecrets(store, [...before, next], next);
  writeKeyring(file, [next, ...others]);
  out(`re-encrypted ${count} secrets with key ${next.id}, now the key that encrypts`);
  if (graceMs > 0) await sleep(graceMs);
  const late = await resealSecrets(store, readKeyring(file), next);
  if (late > 0) out(`re-encrypted ${late} secrets written with an old key during the rotation`);
  const used = await keyIdsInUse(store);
  const ring = readKeyring(file);
  // A value without a key id (from before key ids) may be any key's: then every key stays.
  const kept = ring.filter((k) => k.id === next.id || used.has(k.id) || used.has('v1'));
  writeKeyring(file, kept);
  const dropped = ring.filter((k) => !kept.includes(k)).map((k) => k.id);
  out(dropped.length > 0 ? `dropped old keys ${dropped.join(', ')}` : 'no old key to drop');
  if (kept.length > 1)
    out(
      `kept keys still in use: ${kept
        .slice(1)
        .map((k) => k.id)
        .join(', ')}; run the command again to drop them`,
    );
}

/** MILLRACE_SECRET_KEY: re-encrypt only; the operator switches the servers' key (see the help text). */
async function rotateInEnvironment(store: Store, ring: Keyring, next: Key): Promise<void> {
  const count = await resealSecrets(store, [...ring, next], next);
  out(`re-encrypted ${count} secrets with key ${next.id}`);
  out('Now set MILLRACE_SECRET_KEY to the new key on every server node and restart them (see --help).');
}
