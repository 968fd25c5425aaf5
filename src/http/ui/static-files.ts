import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
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
        const body = readFileSync(path);
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
        files.set(relative(dir, path).split(sep).join('/'), { body, type: TYPES[extname(entry.name)] as string, etag });
      }
    }
  };
  walk(dir);
  return files;
}
