// Where the compiled program is (dist/, built by `npm run build` from src/ with tsc) and whether it is current.
// bin/millrace and scripts/build.mjs share this; it loads nothing but node built-ins.
//
// dist/ is current when its stamp (written after a successful build) is newer than every file of src/ and the
// files that shape the build: a checkout or an edit after the last build makes it stale.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../', import.meta.url));
export const stampFile = join(root, 'dist', '.built');
export const mainEntry = join(root, 'dist', 'cli', 'main.js');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

/** 'current', 'stale' or 'missing'. */
export function distState() {
  let built;
  try {
    built = statSync(stampFile).mtimeMs;
  } catch {
    return 'missing';
  }
  let inputs = 0;
  try {
    inputs = Math.max(
      newestMtime(join(root, 'src')),
      ...['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'].map((f) =>
        statSync(join(root, f)).mtimeMs,
      ),
    );
  } catch {
    return 'current'; // an installed copy without its sources
  }
  return inputs > built ? 'stale' : 'current';
}
