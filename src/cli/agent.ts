import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { CONFIG_ENV, optionsOf, parseSwitch, parseWhole, resolveOptions } from '../config/options.ts';
import { addOptions, typed } from './options.ts';
import { VERSION } from '../version.ts';
import { serverList } from '../agent/servers.ts';
import { type AgentTls, tlsOptions } from '../agent/connection.ts';

interface AgentFlags {
  server: string;
  processServer: string;
  secretFile: string;
  data?: string;
  slots?: string;
  parentPid?: string;
  parentPipe?: string;
  logJobs?: boolean;
  spawner?: string;
  nice?: number;
  watchRoots: string[];
  tls: AgentTls;
}

/**
 * `millrace agent`: a process server's agent, a small separate process that runs the jobs the server dispatches
 * to it. It loads only node built-ins and src/agent (no server libraries), so it stays small and forks fast.
 */
export function registerAgent(program: Command): void {
  const cmd = program
    .command('agent')
    .description('run the agent of a process server: connects to the server and runs the jobs dispatched to it');
  addOptions(cmd, 'agent')
    // Given by the server to the local agent it starts; not an operator's option.
    .addOption(new Option('--parent-pid <pid>', 'stop once this process is gone and no job runs').hideHelp())
    .addOption(new Option('--parent-pipe <fd>', 'a pipe from the parent: its end means the parent is gone').hideHelp())
    .addOption(new Option('--server-certificate <file>', "trust exactly the server's own certificate").hideHelp())
    .action(async (flags: Record<string, unknown>) => {
      await runAgent(await agentFlags(flags, typed(cmd)));
    });
}

/** The agent's options: flag > environment > configuration file (src/config/options.ts). */
async function agentFlags(flags: Record<string, unknown>, given: (name: string) => boolean): Promise<AgentFlags> {
  const path = (typeof flags.config === 'string' ? flags.config : undefined) ?? (process.env[CONFIG_ENV] || undefined);
  const file = path ? await (await import('../config/file.ts')).readConfigFile(path, 'agent') : undefined;
  const r = resolveOptions('agent', flags, given, process.env, file);
  const required = (key: string): string => {
    const v = r.get(key);
    if (!v || v.text === '') {
      const o = optionsOf('agent').find((x) => x.key === key);
      throw new Error(`--${key} is required (or ${o?.env}, or "${key}" in the [agent] section of --config)`);
    }
    return v.text;
  };
  const logJobs = r.get('log-jobs');
  const data = r.get('data');
  const slots = r.get('slots');
  const spawner = r.get('spawner');
  const nice = r.get('nice');
  const pathOf = (key: string) => {
    const v = r.get(key)?.text;
    return v ? resolve(v) : undefined;
  };
  const [caFile, certFile, keyFile] = [pathOf('ca-file'), pathOf('tls-cert'), pathOf('tls-key')];
  if ((certFile === undefined) !== (keyFile === undefined)) throw new Error('--tls-cert and --tls-key go together');
  const pinned = typeof flags.serverCertificate === 'string' ? resolve(flags.serverCertificate) : undefined;
  return {
    tls: {
      ...(caFile ? { caFile } : {}),
      ...(certFile && keyFile ? { certFile, keyFile } : {}),
      ...(pinned ? { serverCertificate: pinned } : {}),
    },
    server: required('server'),
    processServer: required('process-server'),
    secretFile: required('secret-file'),
    ...(data ? { data: data.text } : {}),
    ...(slots ? { slots: slots.text } : {}),
    ...(typeof flags.parentPid === 'string' ? { parentPid: flags.parentPid } : {}),
    ...(typeof flags.parentPipe === 'string' ? { parentPipe: flags.parentPipe } : {}),
    logJobs: logJobs ? parseSwitch(logJobs) : false,
    ...(spawner ? { spawner: spawner.text } : {}),
    ...(nice ? { nice: parseWhole(nice, 0, 19) } : {}),
    watchRoots: (r.get('watch-root')?.text ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== ''),
  };
}

/**
 * `--process-server` as a key: `<partition>.<name>`, or a bare name meaning GLOBAL as everywhere else keys are
 * written. Checked by its form only (the agent loads no model): the server judges the rest at `hello`.
 */
export function processServerKey(text: string): string {
  if (/^[^./\\\0]+$/.test(text)) return `GLOBAL.${text}`;
  if (/^[^./\\\0][^/\\\0]*\.[^/\\\0]+$/.test(text)) return text;
  throw new Error(`--process-server "${text}" is not <partition>.<name> or a name (meaning GLOBAL.<name>)`);
}

async function runAgent(flags: AgentFlags): Promise<void> {
  const processServer = processServerKey(flags.processServer);
  try {
    serverList(flags.server);
  } catch (err) {
    throw new Error(`--server: ${err instanceof Error ? err.message : String(err)}`);
  }
  const slots = flags.slots === undefined ? undefined : positive('--slots', flags.slots);
  const spawner = flags.spawner;
  if (spawner !== undefined && spawner !== 'python3' && spawner !== 'node')
    throw new Error(`--spawner is python3 or node, not "${spawner}"`);
  const parentPid = flags.parentPid === undefined ? undefined : positive('--parent-pid', flags.parentPid);
  const parentPipe = flags.parentPipe === undefined ? undefined : positive('--parent-pipe', flags.parentPipe);
  let secret: string;
  try {
    secret = readFileSync(flags.secretFile, 'utf8').trim();
  } catch (err) {
    throw new Error(`cannot read --secret-file: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!secret) throw new Error(`--secret-file ${flags.secretFile} is empty`);
  // Read once now, so that a wrong path stops the start rather than each connection; read again at each one.
  tlsOptions(flags.tls);

  if (flags.nice !== undefined) lowerPriority(flags.nice);

  const { startAgent } = await import('../agent/agent.ts');
  const { AgentLockedError } = await import('../agent/pidfile.ts');
  let agent: Awaited<ReturnType<typeof startAgent>>;
  try {
    agent = await startAgent({
      server: flags.server,
      processServer,
      secret,
      tls: flags.tls,
      dataDir: flags.data ?? `agent-data/${processServer}`,
      slots,
      parentPid,
      parentPipe,
      logJobs: flags.logJobs === true,
      ...(spawner ? { spawner } : {}),
      version: VERSION,
      watchRoots: flags.watchRoots.map((root) => resolve(root)),
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

/**
 * Lowers this process's CPU priority to `nice`; never raises it (only a privileged process may). On Linux the
 * priority is the calling thread's, and the main thread is the one that starts the spawner and forks job
 * processes: they inherit it. Node's helper threads keep theirs.
 */
function lowerPriority(nice: number): void {
  try {
    if (getPriority() < nice) setPriority(nice);
  } catch (err) {
    // A platform that refuses (a sandbox's filter): the agent runs on at the priority it was given.
    process.stderr.write(`millrace agent: --nice ${nice} not applied: ${err instanceof Error ? err.message : err}\n`);
  }
}
