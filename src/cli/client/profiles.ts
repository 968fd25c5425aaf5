import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { normalizeVendor } from '../../config/config.ts';
import { emptyRecord, own } from '../../domain/own.ts';
import { errorMessage } from '../../errors.ts';

/**
 * Where the client finds its server and API key: flag > environment > profile. Profiles live in one TOML file,
 * `$XDG_CONFIG_HOME/millrace/config` (default `~/.config/millrace/config`), written by `millrace login` with mode
 * 0600 since it holds keys:
 *
 *   current = "prod"
 *   [profiles.prod]
 *   server = "http://sched.example.com:7070/millrace"
 *   api_key = "…"
 *   vendor = "Vendor"
 *   ca_file = "/etc/millrace/ca.pem"   # a private CA the server's certificate is verified against
 */

export interface Profile {
  server: string;
  api_key: string;
  vendor?: string;
  ca_file?: string;
}

export interface ProfileFile {
  current?: string;
  profiles: Record<string, Profile>;
}

/** What the connection flags of a client command give. */
export interface ConnectionFlags {
  server?: string;
  apiKey?: string;
  vendor?: string;
  profile?: string;
  caFile?: string;
}

export interface Connection {
  /** The server's URL with its context, without a trailing slash. */
  server: string;
  apiKey: string;
  vendor: string;
  /** `<server>/api-extension/External/<Vendor>/<Vendor>_RestService/rest/v1` */
  base: string;
  /** CA certificates (PEM) an `https://` server is verified against, besides the system's. */
  caFile?: string;
}

export const PROFILE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(root, 'millrace', 'config');
}

export function readProfiles(path: string): ProfileFile {
  if (!existsSync(path)) return { profiles: emptyRecord() };
  let doc: Record<string, unknown>;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: ${errorMessage(err).split('\n')[0]}`);
  }
  const profiles = emptyRecord<Profile>();
  const given = (doc.profiles ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, p] of Object.entries(given)) {
    if (typeof p.server !== 'string' || typeof p.api_key !== 'string')
      throw new Error(`${path}: profile ${name} needs server and api_key`);
    profiles[name] = {
      server: p.server,
      api_key: p.api_key,
      ...(typeof p.vendor === 'string' ? { vendor: p.vendor } : {}),
      ...(typeof p.ca_file === 'string' ? { ca_file: p.ca_file } : {}),
    };
  }
  return { ...(typeof doc.current === 'string' ? { current: doc.current } : {}), profiles };
}

/** Adds or replaces a profile and makes it the current one; the file is replaced whole, mode 0600 from the start. */
export async function saveProfile(path: string, name: string, profile: Profile): Promise<void> {
  const file = readProfiles(path);
  file.profiles[name] = profile;
  file.current = name;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, stringify(file), { mode: 0o600 });
  await chmod(temp, 0o600); // a umask cannot widen it, but an existing temp file would keep its mode
  await rename(temp, path);
}

export function checkServerUrl(url: string, what: string): string {
  const trimmed = url.replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw new Error(`${what}: "${url}" is not a URL such as http://host:7070/millrace`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`${what}: "${url}" is not an http or https URL`);
  return trimmed;
}

export function jsonBase(server: string, vendor: string): string {
  return `${server}/api-extension/External/${vendor}/${vendor}_RestService/rest/v1`;
}

/** The server and key of a command: flag, then environment, then the named (or current) profile. */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Connection {
  const path = configPath(env);
  const profileName = flags.profile ?? env.MILLRACE_PROFILE;
  const given =
    (flags.server ?? env.MILLRACE_URL) !== undefined && (flags.apiKey ?? env.MILLRACE_API_KEY) !== undefined;
  // The file is read only when it is needed, so a broken one does not stop a command given everything.
  const file: ProfileFile = given && profileName === undefined ? { profiles: emptyRecord() } : readProfiles(path);
  const name = profileName ?? file.current;
  const profile = name !== undefined ? own(file.profiles, name) : undefined;
  if (profileName !== undefined && !profile) throw new Error(`no profile "${profileName}" in ${path}`);
  const serverText = flags.server ?? env.MILLRACE_URL ?? profile?.server;
  if (serverText === undefined)
    throw new Error('no server: give --server URL, set MILLRACE_URL, or run `millrace login` once');
  const server = checkServerUrl(serverText, flags.server !== undefined ? '--server' : 'server');
  const apiKey = flags.apiKey ?? env.MILLRACE_API_KEY ?? profile?.api_key;
  if (apiKey === undefined || apiKey === '')
    throw new Error('no API key: give --api-key, set MILLRACE_API_KEY, or run `millrace login` once');
  const vendor = normalizeVendor(flags.vendor ?? env.MILLRACE_VENDOR ?? profile?.vendor ?? 'Vendor');
  const caFile = flags.caFile ?? env.MILLRACE_CA_FILE ?? profile?.ca_file;
  return { server, apiKey, vendor, base: jsonBase(server, vendor), ...(caFile ? { caFile } : {}) };
}
