import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { VERSION } from '../version.ts';

interface AgentFlags {
  server: string;
  processServer: string;
  secretFile: string;
  data?: string;
  slots?: string;
  parentPid?: string;
  logJobs?: boolean;
}

/**
 * `millrace agent`: a process server's agent, a small separate process that runs the jobs the server dispatches
 * to it. It loads only node built-ins and src/agent (no server libraries), so it stays small and forks fast.
 */
export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description('run the agent of a process server: connects to the server and runs the jobs dispatched to it')
    .requiredOption('--server <url>', 'server root with its context path, e.g. http://127.0.0.1:7070/millrace')
    .requiredOption('--process-server <partition.name>', 'the process server this agent is, e.g. GLOBAL.Local')
    .requiredOption('--secret-file <file>', "file holding the process server's secret")
    .option('--data <dir>', "the agent's folder: pid file, spool, work folders (default ./agent-data/<process server>)")
    .option('--slots <n>', 'job slots offered (informative; default: the number of CPUs)')
    .option('--parent-pid <pid>', 'stop once this process is gone and no job runs')
    .option('--log-jobs', "log every job's start and end (default: only failed starts, signals and kills)")
    .action(async (flags: AgentFlags) => {
      await runAgent(flags);
    });
}

async function runAgent(flags: AgentFlags): Promise<void> {
  const processServer = flags.processServer;
  if (!/^[^./\\\0][^/\\\0]*\.[^/\\\0]+$/.test(processServer))
    throw new Error(`--process-server "${processServer}" is not <partition>.<name>`);
  try {
    new URL(flags.server);
  } catch {
    throw new Error(`--server "${flags.server}" is not a URL`);
  }
  const slots = flags.slots === undefined ? undefined : positive('--slots', flags.slots);
  const parentPid = flags.parentPid === undefined ? undefined : positive('--parent-pid', flags.parentPid);
  let secret: string;
  try {
    secret = readFileSync(flags.secretFile, 'utf8').trim();
  } catch (err) {
    throw new Error(`cannot read --secret-file: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!secret) throw new Error(`--secret-file ${flags.secretFile} is empty`);

  const { startAgent } = await import('../agent/agent.ts');
  const { AgentLockedError } = await import('../agent/pidfile.ts');
  let agent: Awaited<ReturnType<typeof startAgent>>;
  try {
    agent = await startAgent({
      server: flags.server,
      processServer,
      secret,
      dataDir: flags.data ?? `agent-data/${processServer}`,
      slots,
      parentPid,
      logJobs: flags.logJobs === true,
      version: VERSION,
    });
  } catch (err) {
    if (err instanceof AgentLockedError) {
      process.stdout.write(`${err.message}\n`);
      process.exit(0);
    }
    throw err;
  }
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      process.stderr.write(`millrace agent: second ${signal}, exiting at once\n`);
      process.exit(1);
    }
    void agent.drain();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await agent.closed;
  process.exit(0);
}

function positive(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer`);
  return n;
}
