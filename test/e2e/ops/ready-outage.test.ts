import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pino from 'pino';
import { DEFAULTS } from '../../../src/config/config.ts';
import { createServer, type MillraceServer } from '../../../src/main.ts';
import { ROOT } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

const run = promisify(execFile);
const cluster = (command: string, dir: string) =>
  run('bash', [join(ROOT, 'scripts/pg-cluster.sh'), command, dir], { timeout: 90_000 });

/**
 * A PostgreSQL outage under a running server turns GET /health/ready to 503 with the reason,
 * and back to 200 once the database is back; /health/live answers throughout. A cluster of its own (not the
 * suite's shared one), stopped and started again by scripts/pg-cluster.sh pause/resume.
 */
describe('readiness follows the database (PostgreSQL outage)', { skip: !process.env.MILLRACE_TEST_PG_URL }, () => {
  let clusterDir = '';
  let dataDir = '';
  let server: MillraceServer | undefined;
  before(async () => {
    clusterDir = await mkdtemp(join(tmpdir(), 'mr-pg-outage-'));
    dataDir = await mkdtemp(join(tmpdir(), 'millrace-outage-'));
    const { stdout } = await cluster('start', clusterDir);
    server = await createServer(
      { ...DEFAULTS, dataDir, databaseUrl: stdout.trim(), localAgent: false, port: 0 },
      { logger: pino({ level: 'silent' }), env: {} },
    );
    await server.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await cluster('resume', clusterDir).catch(() => {});
    await server?.close().catch(() => {});
    await cluster('stop', clusterDir).catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });
  // Over a socket, as a load balancer's probe asks; the bound only catches a hang.
  const get = async (path: string) => {
    const { port } = (server as MillraceServer).app.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(60_000) });
    return { status: res.status, json: (await res.json()) as { status: string; reason?: string } };
  };

  test('ready → 503 naming the database while it is down → ready again', async () => {
    assert.deepEqual(await get('/health/ready'), { status: 200, json: { status: 'ready' } });
    await cluster('pause', clusterDir);
    const down = await waitFor(
      '503 while the database is down',
      async () => {
        const r = await get('/health/ready');
        return r.status === 503 ? r : undefined;
      },
      30_000,
    );
    assert.equal(down.json.status, 'not ready');
    assert.match(String(down.json.reason), /database/);
    assert.deepEqual(await get('/health/live'), { status: 200, json: { status: 'live' } });
    await cluster('resume', clusterDir);
    await waitFor('ready again', async () => ((await get('/health/ready')).status === 200 ? true : undefined), 60_000);
  });
});
