import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { registerAgent } from './agent.ts';

type Registrar = (program: Command) => void;

/**
 * The command groups and the top-level commands each adds. A group's module is loaded only when its command is run
 * (or when the whole program's help is asked for): a client call such as `millrace job list` then loads neither the
 * server nor the database libraries, which halves its start-up time.
 */
const GROUPS: readonly { commands: readonly string[]; load: () => Promise<Registrar> }[] = [
  { commands: ['serve'], load: async () => (await import('./serve.ts')).registerServe },
  { commands: ['apikey', 'user'], load: async () => (await import('./accounts.ts')).registerAccountCommands },
  { commands: ['audit'], load: async () => (await import('./audit.ts')).registerAuditCommands },
  { commands: ['secrets'], load: async () => (await import('./secrets.ts')).registerSecretCommands },
  {
    commands: ['backup', 'restore', 'migrate'],
    load: async () => (await import('./backup.ts')).registerBackupCommands,
  },
  { commands: ['car'], load: async () => (await import('./car.ts')).registerCarCommands },
  {
    commands: ['login', 'job', 'def', 'queue', 'server', 'msg', 'alert', 'apply'],
    load: async () => (await import('./client/commands.ts')).registerClientCommands,
  },
];

/** `millrace`: the one command-line program (server, agent, administration, client). */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command('millrace')
    .description('Millrace workload-automation server')
    .version(VERSION)
    .showHelpAfterError();
  const command = argv[2];
  const own = GROUPS.find((g) => command !== undefined && g.commands.includes(command));
  const registrars = await Promise.all((own ? [own] : GROUPS).map((g) => g.load()));
  registrars[0]?.(program);
  // `agent` is small and always there; it is listed second in the help, as before.
  registerAgent(program);
  for (const register of registrars.slice(1)) register(program);
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
      // A command that failed ends, even if something it started still holds the event loop.
      setTimeout(() => process.exit(1), 5000).unref();
    });
}
