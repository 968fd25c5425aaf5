import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { registerAccountCommands } from './accounts.ts';
import { registerServe } from './serve.ts';

/** `millrace`: the one command-line program (server, agent, administration). */
export function buildProgram(): Command {
  const program = new Command('millrace')
    .description('Millrace workload-automation server')
    .version(VERSION)
    .showHelpAfterError();
  registerServe(program);
  registerAccountCommands(program);
  return program;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    process.stderr.write(`millrace: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
