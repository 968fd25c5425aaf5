import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { DEFAULTS } from '../src/config/config.ts';
import { createServer } from '../src/main.ts';

/** Where the description document is checked in. */
export const SWAGGER_FILE = new URL('../docs/swagger.yml', import.meta.url);

/**
 * The description document as the server serves it with the default context and vendor, generated from the
 * route schemas of a real app on a throwaway database.
 */
export async function renderOpenApi(): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'millrace-openapi-'));
  try {
    const server = await createServer({ ...DEFAULTS, dataDir }, { logger: pino({ level: 'silent' }), env: {} });
    try {
      await server.app.ready();
      return server.app.swagger({ yaml: true });
    } finally {
      await server.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
