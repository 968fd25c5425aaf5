import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../src/config/config.ts';
import type { Backend } from './backends.ts';
import { ADMIN_KEY, startE2eServer, type TestServer } from './server.ts';

/** A listening server and what a `millrace` client command needs to reach it as the admin. */
export interface CliTarget {
  t: TestServer;
  /** The server's root URL (`MILLRACE_URL`). */
  url: string;
  /** The test's own folder; `config/` in it is the client's config folder. */
  dir: string;
  /** MILLRACE_URL, MILLRACE_API_KEY (the admin's) and XDG_CONFIG_HOME, for runCli. */
  env: Record<string, string>;
  /** Removes the folder and closes the server. */
  close(): Promise<void>;
}

/**
 * Starts an end-to-end server (startE2eServer) for the client commands' tests, with a config folder of the test's
 * own so a developer's profiles cannot change what the test sees.
 */
export async function startCliTarget(
  backend: Backend,
  prefix: string,
  overrides: Partial<Config> = {},
): Promise<CliTarget> {
  const t = await startE2eServer(backend, overrides);
  const { port } = t.server.app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}/millrace`;
  const dir = mkdtempSync(join(tmpdir(), `millrace-${prefix}-`));
  return {
    t,
    url,
    dir,
    env: { MILLRACE_URL: url, MILLRACE_API_KEY: ADMIN_KEY, XDG_CONFIG_HOME: join(dir, 'config') },
    async close() {
      rmSync(dir, { recursive: true, force: true });
      await t.close();
    },
  };
}
