// `millrace agent` runs from a JavaScript bundle of src/cli/agent-main.ts instead of through tsx: tsx's loader
// thread and its transformer add some 35 MB to a process (an agent is ~85 MB with tsx, ~50 MB from the bundle),
// and every job an agent spawns forks it, so its size is what a spawn costs.
//
// The bundle is built by esbuild (tsx's own transformer, always installed with it) in a child process, so the
// agent never loads esbuild either. It is cached in node_modules/.cache/millrace/ with the list of its inputs and
// their SHA-256; it is rebuilt whenever one of them changes, so there is still no build step to forget.
//
//   agentBundle()                     the bundle's path, building it first if needed; null when it cannot be built
//   node bin/agent-bundle.mjs --build builds it (what agentBundle runs in the child)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const cacheDir = join(root, 'node_modules', '.cache', 'millrace');
const manifestPath = join(cacheDir, 'agent.json');
const ENTRY = 'src/cli/agent-main.ts';

/** SHA-256 over the inputs' names and contents; null when one cannot be read. */
function digest(inputs) {
  const hash = createHash('sha256');
  try {
    for (const input of inputs) hash.update(`${input}\0`).update(readFileSync(join(root, input))).update('\0');
  } catch {
    return null;
  }
  return hash.digest('hex').slice(0, 24);
}

/** The cached bundle when it was built from the sources as they are now. */
function current() {
  try {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (!Array.isArray(manifest.inputs) || digest(manifest.inputs) !== manifest.hash) return null;
    const bundle = join(cacheDir, `agent-${manifest.hash}.mjs`);
    readFileSync(bundle, { encoding: 'utf8', flag: 'r' }).length; // exists and is readable
    return bundle;
  } catch {
    return null;
  }
}

export function agentBundle() {
  const cached = current();
  if (cached) return cached;
  const built = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--build'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 60_000,
  });
  return built.status === 0 ? current() : null;
}

async function build() {
  const esbuild = await import('esbuild');
  const temp = join(cacheDir, `agent.${process.pid}.tmp`);
  mkdirSync(cacheDir, { recursive: true });
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [ENTRY],
    outfile: temp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    metafile: true,
    logLevel: 'error',
    // CommonJS dependencies (commander) call require() for node built-ins.
    // src/version.ts reads package.json next to its own file, which the bundle is not: give it the text instead.
    plugins: [
      {
        name: 'millrace-version',
        setup(b) {
          b.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, () => ({ contents: `export const VERSION = ${JSON.stringify(version)};`, loader: 'ts' }));
        },
      },
    ],
    banner: { js: "import { createRequire as __millraceRequire } from 'node:module';\nconst require = __millraceRequire(import.meta.url);" },
  });
  const inputs = [...Object.keys(result.metafile.inputs), 'package.json'].sort();
  const hash = digest(inputs);
  if (!hash) throw new Error('an input vanished during the build');
  renameSync(temp, join(cacheDir, `agent-${hash}.mjs`));
  const manifestTemp = `${manifestPath}.${process.pid}.tmp`;
  writeFileSync(manifestTemp, `${JSON.stringify({ hash, inputs })}\n`);
  renameSync(manifestTemp, manifestPath);
  // Older bundles: an agent running from one has it in memory already.
  for (const name of readdirSync(cacheDir))
    if (/^agent-[0-9a-f]+\.mjs$/.test(name) && name !== `agent-${hash}.mjs`) rmSync(join(cacheDir, name), { force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--build') {
  build().catch((err) => {
    process.stderr.write(`millrace: cannot bundle the agent (running it through tsx instead): ${err?.message ?? err}\n`);
    process.exit(1);
  });
}
