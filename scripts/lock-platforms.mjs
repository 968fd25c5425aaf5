// Adds to package-lock.json the entries of the linter's platform packages (@biomejs/cli-<os>-<cpu>[-musl]) that
// `npm install` leaves out when the registry it reached does not serve them, so that `npm ci` accepts the
// lockfile (it wants an entry for every optional dependency). The entries carry no integrity hash: npm skips them on
// other platforms and fetches them from the public registry where they apply. Run after `npm install`:
//   node scripts/lock-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const biome = packages['node_modules/@biomejs/biome'];
if (!biome) process.exit(0);
const entries = {};
for (const name of Object.keys(biome.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (packages[key]) {
    entries[key] = packages[key];
    continue;
  }
  const m = /^@biomejs\/cli-(\w+)-(\w+?)(-musl)?$/.exec(name);
  if (!m) throw new Error(`unexpected platform package ${name}`);
  entries[key] = {
    version: biome.optionalDependencies[name],
    cpu: [m[2]],
    dev: biome.dev,
    ...(m[1] === 'linux' ? { libc: [m[3] ? 'musl' : 'glibc'] } : {}),
    license: biome.license,
    optional: true,
    os: [m[1]],
    engines: biome.engines,
  };
}
// Keep npm's order: the platform packages right after the package that names them, sorted.
const out = {};
for (const [key, value] of Object.entries(packages)) {
  if (key in entries) continue;
  out[key] = value;
  if (key === 'node_modules/@biomejs/biome') for (const k of Object.keys(entries).sort()) out[k] = entries[k];
}
lock.packages = out;
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
