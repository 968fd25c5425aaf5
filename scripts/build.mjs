// `npm run build` (and `prepare`, so `npm install` builds): compiles src/ to dist/ with tsc (tsconfig.build.json;
// `.ts` import specifiers are rewritten to `.js`), copies the dashboard's static files, then stamps dist/ as current (bin/dist.mjs).
//
//   node scripts/build.mjs              build
//   node scripts/build.mjs --if-stale   build only when dist/ is missing or older than src/ (scripts/test.sh)
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { distState, root, stampFile } from '../bin/dist.mjs';

if (process.argv.includes('--if-stale') && distState() === 'current') process.exit(0);
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  process.stderr.write('build: typescript is not installed (a development dependency): run `npm install`\n');
  process.exit(1);
}
const started = Date.now();
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${result.status ?? result.signal})\n`);
  process.exit(1);
}
// The dashboard's static files (plain ES modules and CSS, not compiled) sit beside the compiled code that serves them.
rmSync(join(root, 'dist/ui/static'), { recursive: true, force: true });
cpSync(join(root, 'src/ui/static'), join(root, 'dist/ui/static'), { recursive: true });
// Stamped with the time the build started: a source edited during the build leaves dist/ stale.
writeFileSync(stampFile, `${new Date(started).toISOString()}\n`);
utimesSync(stampFile, started / 1000, started / 1000);
process.stdout.write(`build: dist/ compiled in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
