import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The dashboard's files (src/ui/static), read once at start: a few tens of KiB, served from memory. */
export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

export const STATIC_DIR = fileURLToPath(new URL('../../ui/static/', import.meta.url));

/**
 * Libraries the dashboard loads, served from the installed npm packages (runtime dependencies) under `vendor/`,
 * so that nothing is loaded from elsewhere and the build copies nothing: uPlot draws the runtime charts.
 */
const VENDOR: Record<string, string> = {
  'vendor/uPlot.iife.min.js': 'uplot/dist/uPlot.iife.min.js',
  'vendor/uPlot.min.css': 'uplot/dist/uPlot.min.css',
};

/**
 * Every file under `dir` by its path relative to it (`app/main.js`). Only these paths are ever served, so a
 * request can name nothing else (no `..`, no symlinks followed at request time).
 */
export function loadStaticFiles(dir: string = STATIC_DIR): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && TYPES[extname(entry.name)]) {
        files.set(relative(dir, path).split(sep).join('/'), served(readFileSync(path), entry.name));
      }
    }
  };
  walk(dir);
  const resolve = createRequire(import.meta.url).resolve;
  for (const [path, module] of Object.entries(VENDOR)) files.set(path, served(readFileSync(resolve(module)), path));
  return files;
}

const served = (body: Buffer, name: string): StaticFile => ({
  body,
  type: TYPES[extname(name)] as string,
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
});
