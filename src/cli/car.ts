import { createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { readCar } from '../car/archive.ts';
import { writeCar } from '../car/archive-writer.ts';
import { generateSigningKey, keyIdOf, loadTrustedKeys, signEntries, verifyEntries } from '../car/signing.ts';
import { normalizeVendor } from '../config/config.ts';
import { errorMessage } from '../errors.ts';

/**
 * `millrace car …`: signing keys, signing and verifying CAR files locally, and export/import through a running
 * server's XML interface (`api-rest/car`). The local commands never write an archive's entries to disk: an
 * archive is read and written as bytes (src/car/archive.ts).
 */

const out = (line: string) => process.stdout.write(`${line}\n`);
const collect = (value: string, previous: string[]) => [...previous, value];

const HELP_VERIFY = `
Exit status 0 and "signed by <key id>" when the archive is signed by one of the trusted keys and no entry was
added, removed or changed since; otherwise exit status 1 and the reason (not signed, untrusted key, tampered).
--trusted may be given several times; a folder stands for every *.pem and *.pub public key in it.`;

const HELP_SERVER = `
The server is reached at --url or MILLRACE_URL (default http://127.0.0.1:7070/millrace) with basic
authentication: --user or MILLRACE_USER (default admin), --password or MILLRACE_PASSWORD (prefer the variable:
arguments are visible to other users of the machine). --vendor or MILLRACE_VENDOR names the X-<vendor>-… headers.`;

export function registerCarCommands(program: Command): void {
  const car = program.command('car').description('CAR archives: signing keys, sign, verify, export and import');
  car
    .command('keygen')
    .description('make an Ed25519 signing key pair: <name>.key (private, mode 0600) and <name>.pub')
    .argument('<name>', 'path and name of the two files, without extension')
    .action((name: string) => keygen(name));
  car
    .command('sign')
    .description('sign a CAR (replaces an existing signature)')
    .requiredOption('--key <file>', 'private key (PEM) made by `millrace car keygen`')
    .option('-o, --output <file>', 'write the signed CAR here instead of replacing <car>')
    .argument('<car>', 'CAR file')
    .action((file: string, flags: { key: string; output?: string }) => signCar(file, flags));
  car
    .command('verify')
    .description('check that a CAR is signed by a trusted key and unchanged since')
    .option('--trusted <file-or-folder>', 'trusted public key, or a folder of them (repeatable)', collect, [])
    .argument('<car>', 'CAR file')
    .addHelpText('after', HELP_VERIFY)
    .action((file: string, flags: { trusted: string[] }) => verifyCar(file, flags.trusted));
  withServer(car.command('export'))
    .description('download an object (and with --references what it refers to) as a CAR')
    .argument('<type>', 'object type, e.g. JobDefinition')
    .argument('<key>', 'business key <partition>.<name>, e.g. GLOBAL.Load')
    .option('--references', 'include the objects it refers to')
    .option('-o, --output <file>', 'write the CAR here (default: standard output)')
    .action((type: string, key: string, flags: ExportFlags) => exportCar(type, key, flags));
  withServer(car.command('import'))
    .description('upload a CAR; it is imported by an import job, all or nothing')
    .argument('<file>', 'CAR file')
    .option('--target-partition <partition>', 'import every object into this partition')
    .option('--rule-set <partition.name>', 'import rule set to apply')
    .option('--rule-set-properties <k=v,...>', 'parameters of the import rule set')
    .option('--signed', 'the CAR is signed: the server refuses it unless a trusted key signed it')
    .option('--async', 'return as soon as the import job is created')
    .option('--description <text>', 'description of the import')
    .option('--file-name <name>', 'name of the CAR in the import (default: the file name)')
    .action((file: string, flags: ImportFlags) => importCar(file, flags));
}

async function keygen(name: string): Promise<void> {
  const privatePath = `${name}.key`;
  const publicPath = `${name}.pub`;
  for (const path of [privatePath, publicPath])
    if (existsSync(path)) throw new Error(`${path} exists already; not overwriting it`);
  const key = generateSigningKey();
  // 'wx' also refuses a file created meanwhile; the mode is set at creation, so the key is never readable by others.
  await writeFile(privatePath, key.privateKeyPem, { mode: 0o600, flag: 'wx' });
  await writeFile(publicPath, key.publicKeyPem, { mode: 0o644, flag: 'wx' });
  out(`private key: ${privatePath} (keep it secret)`);
  out(`public key:  ${publicPath} (copy it to the trusted keys of the servers that import)`);
  out(`key id: ${key.keyId}`);
}

/** Writes next to the target and renames, so a reader never sees half a file and a failure leaves the old one. */
async function writeAtomically(path: string, data: Buffer): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, data, { flag: 'wx' });
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

async function signCar(file: string, flags: { key: string; output?: string }): Promise<void> {
  const pem = await readFile(flags.key, 'utf8');
  const entries = await readCar(await readFile(file));
  const signed = signEntries(entries, pem);
  const target = flags.output ?? file;
  await writeAtomically(target, await writeCar(signed));
  out(`signed ${target} (${entries.length} entries) with key ${keyIdOf(createPrivateKey(pem))}`);
}

async function verifyCar(file: string, trustedPaths: string[]): Promise<void> {
  if (trustedPaths.length === 0) throw new Error('give the trusted keys with --trusted <file-or-folder>');
  for (const path of trustedPaths) if (!existsSync(path)) throw new Error(`--trusted ${path}: no such file or folder`);
  const trusted = await loadTrustedKeys(trustedPaths);
  const entries = await readCar(await readFile(file));
  const result = verifyEntries(entries, trusted);
  if (!result.signed) throw new Error(`${file} is not signed`);
  out(`signed by ${result.keyId}`);
}

interface ServerFlags {
  url?: string;
  user?: string;
  password?: string;
  vendor?: string;
}

interface ExportFlags extends ServerFlags {
  references?: boolean;
  output?: string;
}

interface ImportFlags extends ServerFlags {
  targetPartition?: string;
  ruleSet?: string;
  ruleSetProperties?: string;
  signed?: boolean;
  async?: boolean;
  description?: string;
  fileName?: string;
}

const withServer = (cmd: Command): Command =>
  cmd
    .option('--url <url>', 'server root with its context path (MILLRACE_URL)')
    .option('--user <name>', 'user name (MILLRACE_USER)')
    .option('--password <password>', 'password (MILLRACE_PASSWORD)')
    .option('--vendor <name>', 'vendor name of the X-<vendor>-… headers (MILLRACE_VENDOR)')
    .addHelpText('after', HELP_SERVER);

interface Server {
  base: string;
  authorization: string;
  vendor: string;
}

function serverOf(flags: ServerFlags, env: NodeJS.ProcessEnv = process.env): Server {
  const url = (flags.url ?? env.MILLRACE_URL ?? 'http://127.0.0.1:7070/millrace').replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url: "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--url: "${url}" is not http(s)`);
  const user = flags.user ?? env.MILLRACE_USER ?? 'admin';
  const password = flags.password ?? env.MILLRACE_PASSWORD;
  if (password === undefined) throw new Error('give the password in MILLRACE_PASSWORD (or with --password)');
  const vendor = normalizeVendor(flags.vendor ?? env.MILLRACE_VENDOR ?? 'Vendor');
  const authorization = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
  return { base: `${url}/api-rest`, authorization, vendor };
}

/** fetch, with a network failure named by its cause (fetch itself only says "fetch failed"). */
async function call(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const cause = err instanceof Error ? err.cause : undefined;
    throw new Error(`cannot reach ${url}: ${cause instanceof Error ? cause.message : errorMessage(err)}`);
  }
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function xmlText(xml: string, element: string): string | undefined {
  const m = new RegExp(`<${element}>([^<]*)</${element}>`).exec(xml);
  return m?.[1]?.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => XML_ENTITIES[e] as string);
}

/** The message of the server's `<error>` answer, or the HTTP status when the body is not one. */
async function refusal(res: Response): Promise<Error> {
  const body = await res.text();
  const message = /<error>/.test(body) ? xmlText(body, 'message') : undefined;
  return new Error(`the server answered ${res.status}: ${message ?? (res.statusText || body.slice(0, 200))}`);
}

async function exportCar(type: string, key: string, flags: ExportFlags): Promise<void> {
  const server = serverOf(flags);
  const query = flags.references ? '?references=true' : '';
  const url = `${server.base}/car/${encodeURIComponent(type)}/${encodeURIComponent(key)}${query}`;
  const res = await call(url, { headers: { Authorization: server.authorization } });
  if (!res.ok) throw await refusal(res);
  const body = Buffer.from(await res.arrayBuffer());
  if (flags.output) {
    await writeAtomically(flags.output, body);
    out(`wrote ${flags.output} (${body.length} bytes)`);
  } else
    await new Promise<void>((resolve, reject) => process.stdout.write(body, (err) => (err ? reject(err) : resolve())));
}

/** fetch refuses header values outside Latin-1; say which option instead of "Cannot convert to a ByteString". */
function headerValue(option: string, value: string): string {
  if (/[^\t\x20-\x7e\xa0-\xff]/.test(value)) throw new Error(`${option}: only Latin-1 text can be sent in a header`);
  return value;
}

async function importCar(file: string, flags: ImportFlags): Promise<void> {
  const server = serverOf(flags);
  const body = await readFile(file);
  const x = (name: string) => `X-${server.vendor}-${name}`;
  const headers: Record<string, string> = {
    Authorization: server.authorization,
    'Content-Type': 'application/zip',
    async: flags.async ? 'true' : 'false',
    [x('FileName')]: headerValue('--file-name', flags.fileName ?? basename(file)),
  };
  if (flags.description !== undefined) headers[x('Description')] = headerValue('--description', flags.description);
  if (flags.ruleSet !== undefined) headers[x('Ruleset')] = headerValue('--rule-set', flags.ruleSet);
  if (flags.ruleSetProperties !== undefined)
    headers[x('Ruleset-Properties')] = headerValue('--rule-set-properties', flags.ruleSetProperties);
  if (flags.targetPartition !== undefined)
    headers[x('TargetPartition')] = headerValue('--target-partition', flags.targetPartition);
  if (flags.signed) headers[x('Signed-Car')] = 'true';
  const res = await call(`${server.base}/car`, { method: 'PUT', headers, body });
  if (!res.ok) throw await refusal(res);
  const answer = await res.text();
  const jobId = xmlText(answer, 'job-id');
  const status = xmlText(answer, 'status');
  if (jobId === undefined || status === undefined)
    throw new Error(`unexpected answer from the server: ${answer.slice(0, 200)}`);
  out(`import job ${jobId}: ${status}`);
  // Synchronous: the job has ended, and only Completed means the objects were imported.
  if (!flags.async && status !== 'Completed') process.exitCode = 1;
}
