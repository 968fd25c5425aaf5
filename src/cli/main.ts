import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { registerAgent } from './agent.ts';

/** `millrace`: the one command-line program (server, agent, administration). */
export async function buildProgram(): Promise<Command> {
  const program = new Command('millrace')
    .description('Millrace workload-automation server')
    .version(VERSION)
    .showHelpAfterError();
  // Loaded on demand: `millrace agent` (below) must not load the server's libraries.
  const [
    { registerServe },
    { registerAccountCommands },
    { registerSecretCommands },
    { registerCarCommands },
    { registerClientCommands },
  ] = await Promise.all([
    import('./serve.ts'),
    import('./accounts.ts'),
    import('./secrets.ts'),
    import('./car.ts'),
    import('./client/commands.ts'),
  ]);
  registerServe(program);
  registerAgent(program);
  registerAccountCommands(program);
  registerSecretCommands(program);
  registerCarCommands(program);
  registerClientCommands(program);
  return program;
}

if (process.argv[2] === 'agent') {
  // An agent stays small: every job it spawns forks it (see agent-main.ts).
  await import('./agent-main.ts');
} else {
  buildProgram()
    .then((program) => program.parseAsync(process.argv))
    .catch((err: unknown) => {
      process.stderr.write(`millrace: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    });
}
