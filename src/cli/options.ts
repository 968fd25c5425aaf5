import { type Command as Program, Option } from 'commander';
import { type Command, CONFIG_ENV, optionsOf } from '../config/options.ts';

/**
 * Adds the flags of `command`'s options (src/config/options.ts) and `--config` to a commander command, each
 * help line naming its environment variable and default. No commander defaults: an option left out must be
 * told apart from one typed, since the environment and the file come between a flag and the default.
 */
export function addOptions(cmd: Program, command: Command): Program {
  cmd.addOption(new Option('--config <file>', `configuration file, TOML or YAML (env ${CONFIG_ENV}; default none)`));
  for (const o of optionsOf(command)) {
    if (o.noFlag) continue;
    const help = `${o.help.replace(/`/g, '')} (env ${o.env}; default ${o.default.replace(/`/g, '')})`;
    if (o.arg && o.list)
      // A list option may also be repeated: its values join as if written comma-separated.
      cmd.addOption(
        new Option(`--${o.key} <${o.arg.toLowerCase()}>`, help).argParser((v: string, before: string | undefined) =>
          before === undefined ? v : `${before},${v}`,
        ),
      );
    else if (o.arg) cmd.addOption(new Option(`--${o.key} <${o.arg.toLowerCase()}>`, help));
    else {
      cmd.addOption(new Option(`--${o.key}`, help));
      cmd.addOption(new Option(`--no-${o.key}`, `(turns --${o.key} off)`));
    }
  }
  return cmd;
}

/** Whether a flag was typed on the command line (not a default, not implied). */
export const typed =
  (cmd: Program) =>
  (name: string): boolean =>
    cmd.getOptionValueSource(name) === 'cli';
