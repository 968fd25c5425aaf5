import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Socket } from 'node:net';
import type { Logger } from 'pino';
import { STAYING } from '../agent/parent-link.ts';

export const LOCAL_SERVER = 'GLOBAL.Local';

/** The local agent's folder and secret file inside the data folder. */
export function localAgentPaths(dataDir: string) {
  const dir = join(dataDir, 'agents', LOCAL_SERVER);
  return { dir, secretFile: join(dataDir, 'agents', `${LOCAL_SERVER}.secret`) };
}

/** Reads the local agent's secret, making one on the first start (readable by the server's user only). */
export function ensureLocalSecret(dataDir: string): string {
  const { secretFile } = localAgentPaths(dataDir);
  if (existsSync(secretFile)) return readFileSync(secretFile, 'utf8').trim();
  mkdirSync(dirname(secretFile), { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** Replaces the local agent's secret (readable by the server's user only): the one the nodes share (docs/architecture.md §16). */
export function writeLocalSecret(dataDir: string, secret: string): void {
  const { secretFile } = localAgentPaths(dataDir);
  mkdirSync(dirname(secretFile), { recursive: true, mode: 0o700 });
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
}

/** How the local agent is started, beside its folder and its server. */
export interface LocalAgentOptions {
  /** Folders it may watch for file events (`--watch-root`). */
  watchRoots: readonly string[];
  /** How it reaches the server over HTTPS (`--server-certificate`, a client certificate); none over HTTP. */
  tlsArgs: readonly string[];
  /** The nice value it runs at (`--nice`), which its job processes inherit. */
  nice: number;
}

/** Keeps the local agent running while the server runs; `stop` asks it to finish (it drains its jobs first). */
export interface LocalAgent {
  current(): ChildProcess | undefined;
  stop(): void;
  /**
   * Stops supervising and tells the agent its server stops (the end of its parent link): an agent with no job
   * running exits, and this resolves once it has; one with jobs running stays to finish them (they report to the
   * next start), says so, and this resolves then.
   */
  leave(): Promise<void>;
}

/**
 * Starts `millrace agent` for GLOBAL.Local as a separate process: job processes are spawned from it, never from
 * the server (docs/architecture.md §1). It gets the server's environment without MILLRACE_* variables (the server's
 * secrets), and leaves by itself once the server is gone and nothing runs: a pipe only the server holds (the
 * agent's descriptor 3, src/agent/parent-link.ts) ends when the server stops or dies, a SIGKILL included. If an
 * agent from an earlier server process still runs (it stays while its jobs run), the new one sees its pid file
 * and steps aside while the old one reconnects and finishes its jobs; whenever the agent exits while the server
 * runs, another is started a little later. It runs at `options.nice`, which its job processes inherit: below the
 * server, so that jobs on the server's machine do not hold up its event loop.
 */
export function superviseLocalAgent(
  dataDir: string,
  serverUrl: string,
  logger: Logger,
  options: LocalAgentOptions,
): LocalAgent {
  let child: ChildProcess | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const launch = () => {
    child = startLocalAgent(dataDir, serverUrl, logger, options);
    child.on('exit', () => {
      if (stopped) return;
      timer = setTimeout(launch, 2000);
      timer.unref();
    });
  };
  launch();
  return {
    current: () => child,
    stop() {
      stopped = true;
      clearTimeout(timer);
      child?.kill('SIGTERM');
    },
    leave() {
      stopped = true;
      clearTimeout(timer);
      return child ? left(child) : Promise.resolve();
    },
  };
}

/** The pipe to the agent (its fd 3): a socket, as every piped stdio of a child is. */
function parentLink(child: ChildProcess): Socket | undefined {
  const link = child.stdio[3];
  return link instanceof Socket ? link : undefined;
}

/** Ends the agent's parent link; resolves once the agent has exited or answered that it stays for its jobs. */
function left(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const link = parentLink(child);
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    if (!link) return;
    let heard = '';
    link.on('data', (chunk: Buffer) => {
      heard += chunk.toString();
      if (heard.includes(STAYING)) resolve();
    });
    link.on('error', () => {}); // the agent gone already: its exit resolves
    link.end();
  });
}

/**
 * The agent's young generation kept small: it allocates little that lives, and every job it starts forks it, so
 * its resident size is paid at each spawn (page tables) and counted against the machine. Measured with
 * bench/agent-alone.ts: a lower peak RSS, CPU per job unchanged (bench/README.md). deploy/millrace-agent.service
 * passes it too.
 */
export const AGENT_HEAP = '--max-semi-space-size=2';

function startLocalAgent(
  dataDir: string,
  serverUrl: string,
  logger: Logger,
  { watchRoots, tlsArgs, nice }: LocalAgentOptions,
): ChildProcess {
  const { dir, secretFile } = localAgentPaths(dataDir);
  const bin = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/millrace');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MILLRACE_')));
  const child = spawn(
    process.execPath,
    [
      AGENT_HEAP,
      bin,
      'agent',
      '--server',
      serverUrl,
      '--process-server',
      LOCAL_SERVER,
      '--secret-file',
      secretFile,
      '--data',
      dir,
      '--parent-pid',
      String(process.pid),
      '--parent-pipe',
      '3',
      ...watchRoots.flatMap((root) => ['--watch-root', root]),
      ...tlsArgs,
      '--nice',
      String(nice),
    ],
    { env, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] },
  );
  // Held, never written: its end is the message. Unreferenced, so it keeps no process (a test's) running.
  parentLink(child)?.unref();
  child.on('exit', (code, signal) => logger.debug({ code, signal }, 'local agent exited'));
  child.on('error', (err) => logger.error({ err }, 'local agent could not start'));
  return child;
}
