import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { registerAgent } from './agent.ts';

/**
 * The entry of `millrace agent`: a program with the agent command only, so that the agent loads commander, node
 * built-ins and src/agent and nothing of the server (src/cli/main.ts imports it for `agent` before anything else).
 */
const program = new Command('millrace').description('Millrace workload-automation server').version(VERSION);
program.showHelpAfterError();
registerAgent(program);
program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`millrace: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
