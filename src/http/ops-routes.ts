import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/metrics.ts';
import type { Store } from '../store/store.ts';

/** What the readiness check asks. */
export interface ReadinessDeps {
  store: Store;
  /** The engine's loop takes work and its timers run. */
  engineRunning: () => boolean;
  /** Set when the server is shutting down (SIGTERM): not ready any more, so balancers stop sending. */
  stopping: () => boolean;
  /** Why the server is short of disk space (a write was refused for it and no probe write has succeeded since). */
  diskFull?: () => Promise<string | undefined>;
}

export interface OpsDeps extends ReadinessDeps {
  metrics?: Metrics;
  /** When set, `GET /metrics` requires `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

/** The database must answer a readiness query within this long, or the server is not ready. */
const DATABASE_TIMEOUT_MS = 2000;

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Routes for operators' tools, at the root of the server's port (outside the context path, as Prometheus and
 * orchestrators expect them) and outside the API-key path: `GET /health/live`, `GET /health/ready`, `GET /metrics`.
 */
export function opsRoutes(app: FastifyInstance, deps: OpsDeps): void {
  const hide = { schema: { hide: true } };
  app.get('/health/live', hide, async () => ({ status: 'live' }));

  app.get('/health/ready', hide, async (_req, reply) => {
    const problem = await notReadyBecause(deps);
    if (problem) return reply.code(503).send({ status: 'not ready', reason: problem });
    return { status: 'ready' };
  });

  const metrics = deps.metrics;
  if (!metrics) return;
  const token = deps.metricsToken ? digest(`Bearer ${deps.metricsToken}`) : undefined;
  app.get('/metrics', hide, async (req, reply) => {
    if (token && !timingSafeEqual(digest(req.headers.authorization ?? ''), token))
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Bearer realm="metrics"')
        .send({ code: '401', message: 'GET /metrics needs the metrics token: Authorization: Bearer <token>' });
    const text = await metrics.render();
    return reply.type(metrics.contentType).send(text);
  });
}

/** Why the server cannot serve now, or undefined when it can. */
async function notReadyBecause(deps: ReadinessDeps): Promise<string | undefined> {
  if (deps.stopping()) return 'the server is shutting down';
  try {
    const pending = await withinTimeout(deps.store.pendingMigrations());
    if (pending.length > 0) return `database migrations not done: ${pending.join(', ')}`;
  } catch (err) {
    return `the database does not answer: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (deps.diskFull) {
    // Its probe waits for the database's writer: a long transaction may hold it, and the disk is still full then.
    const full = await withinTimeout(deps.diskFull()).catch(
      (err: unknown) =>
        `the disk is full (looking for free space: ${err instanceof Error ? err.message : String(err)})`,
    );
    if (full) return full;
  }
  if (!deps.engineRunning()) return 'the engine is not running';
  return undefined;
}

function withinTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${DATABASE_TIMEOUT_MS / 1000} s`)),
        DATABASE_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}
