import type { Command } from 'commander';
import { ApiClient } from './http.ts';
import { type Format, parseFormat } from './output.ts';
import { type ConnectionFlags, resolveConnection } from './profiles.ts';

/** The options every client command takes, and what a command's action gets from them. */

export interface ClientFlags extends ConnectionFlags {
  output?: string;
}

export interface Ctx {
  client: ApiClient;
  format: Format;
}

const HELP = `
The server is --server or MILLRACE_URL (its URL with the context, e.g. http://host:7070/millrace), the key
--api-key or MILLRACE_API_KEY (prefer the variable: arguments are visible to other users); otherwise the profile
--profile or MILLRACE_PROFILE, or the current one, saved by \`millrace login\`. Errors: one line, exit status 1.`;

/** A client command: connection options, `-o table|json|yaml`, and the shared help text. */
export function clientCommand(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .option('--server <url>', 'server URL with its context (MILLRACE_URL)')
    .option('--api-key <key>', 'API key (MILLRACE_API_KEY)')
    .option('--profile <name>', 'profile of the config file (MILLRACE_PROFILE)')
    .option('--vendor <name>', 'vendor name in the interface path (MILLRACE_VENDOR, default Vendor)')
    .option(
      '--ca-file <file>',
      "CA certificates (PEM) an https server's certificate is verified against (MILLRACE_CA_FILE)",
    )
    .option('-o, --output <format>', 'table (default), json or yaml')
    .addHelpText('after', HELP);
}

export function contextOf(flags: ClientFlags): Ctx {
  const format = parseFormat(flags.output);
  return { client: new ApiClient(resolveConnection(flags)), format };
}

export const collect = (value: string, previous: string[]): string[] => [...previous, value];

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Prints a failure of one of several targets as one line and remembers that the command failed. */
export function reportFailure(err: unknown): void {
  process.stderr.write(`millrace: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
