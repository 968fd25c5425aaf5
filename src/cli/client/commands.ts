import { resolve } from 'node:path';
import type { Command } from 'commander';
import { registerApplyCommands } from './apply.ts';
import { registerBulkCommand } from './bulk-command.ts';
import { registerForecastCommand } from './forecast-command.ts';
import { ApiClient } from './http.ts';
import { registerJobCommands } from './job-commands.ts';
import { registerObjectCommands } from './object-commands.ts';
import { registerRuntimeCommands } from './runtime-commands.ts';
import { checkServerUrl, configPath, jsonBase, PROFILE_NAME, saveProfile } from './profiles.ts';
import { normalizeVendor } from '../../config/config.ts';

/** The client commands: everything that talks to a running server over its JSON interface. */
export function registerClientCommands(program: Command): void {
  registerLogin(program);
  registerJobCommands(program);
  registerForecastCommand(program);
  registerObjectCommands(program);
  registerApplyCommands(program);
  const group = (name: string) => program.commands.find((c) => c.name() === name) as Command;
  registerRuntimeCommands(group('def'), group('job'));
  registerBulkCommand(group('job'));
}

interface LoginFlags {
  server?: string;
  apiKey?: string;
  vendor?: string;
  profile: string;
  caFile?: string;
}

async function readKey(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('API key: ');
  const chunks: Buffer[] = [];
  // No encoding is set on stdin, so it yields Buffers.
  const input: AsyncIterable<Buffer> = process.stdin;
  for await (const c of input) {
    chunks.push(c);
    if (process.stdin.isTTY && Buffer.concat(chunks).includes(10)) break;
  }
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0]?.trim() ?? '';
}

function registerLogin(program: Command): void {
  program
    .command('login')
    .description('check a server URL and API key, and save them as a profile (mode 0600)')
    .option('--server <url>', 'server URL with its context, e.g. http://host:7070/millrace (MILLRACE_URL)')
    .option('--api-key <key>', 'API key (MILLRACE_API_KEY; else read from standard input)')
    .option('--vendor <name>', 'vendor name in the interface path (MILLRACE_VENDOR, default Vendor)')
    .option('--profile <name>', 'name of the profile', 'default')
    .option(
      '--ca-file <file>',
      "CA certificates (PEM) an https server's certificate is verified against (MILLRACE_CA_FILE)",
    )
    .addHelpText(
      'after',
      '\nThe profile is saved in $XDG_CONFIG_HOME/millrace/config (default ~/.config/millrace/config) and becomes\nthe current one; other commands take --profile NAME (or MILLRACE_PROFILE) to use another.',
    )
    .action(async (flags: LoginFlags) => {
      if (!PROFILE_NAME.test(flags.profile)) throw new Error(`--profile ${flags.profile}: letters, digits, _ . -`);
      const serverText = flags.server ?? process.env.MILLRACE_URL;
      if (serverText === undefined) throw new Error('give the server with --server URL');
      const server = checkServerUrl(serverText, '--server');
      const vendor = normalizeVendor(flags.vendor ?? process.env.MILLRACE_VENDOR ?? 'Vendor');
      const apiKey = flags.apiKey ?? process.env.MILLRACE_API_KEY ?? (await readKey());
      if (apiKey === '') throw new Error('no API key given');
      const caFile = flags.caFile ?? process.env.MILLRACE_CA_FILE;
      const client = new ApiClient({
        server,
        apiKey,
        vendor,
        base: jsonBase(server, vendor),
        ...(caFile ? { caFile } : {}),
      });
      // Any authenticated answer proves the key; only 401 (and an unreachable server) mean it cannot be used.
      const res = await client.send('GET', '/Partition/GLOBAL');
      if (res.status === 401 || res.status >= 500) throw await client.failure('GET', '/Partition/GLOBAL', res);
      await res.body?.cancel();
      const path = configPath();
      await saveProfile(path, flags.profile, {
        server,
        api_key: apiKey,
        ...(vendor !== 'Vendor' ? { vendor } : {}),
        ...(caFile ? { ca_file: resolve(caFile) } : {}),
      });
      process.stdout.write(`Logged in to ${server}; saved as profile "${flags.profile}" in ${path}\n`);
    });
}
