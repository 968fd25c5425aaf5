// The last step of createServer (main.ts): starting the engine and the periodic work, and closing it all.
import type { Server as HttpsServer } from 'node:https';
import type { FastifyInstance } from 'fastify';
import { startRuntimeStats } from '../runtime-stats.ts';
import { discardFinishedArchives } from '../services/import-job.ts';
import type { ServerCore } from './core-services.ts';
import type { LiveParts } from './live-feed.ts';
import type { ServerBase } from './open-data.ts';
import type { MillraceServer } from './server-types.ts';

/**
 * Starts the engine on the built app, then the periodic work (API key uses recorded every 30 s, the runtime stats
 * file); `close` stops them all in the reverse order.
 */
export async function startServer(
  base: ServerBase,
  core: ServerCore,
  live: LiveParts,
  app: FastifyInstance,
  extra: Pick<MillraceServer, 'firstStart' | 'localAgentElsewhere' | 'jobs' | 'estimates'> & { stop: () => void },
): Promise<MillraceServer> {
  const { store, logger } = base;
  const { engine, auth } = core;
  const { feed, metrics } = live;
  const tls = app.serverTls;
  engine.hub.attach(app.server, tls ? (socket) => tls.agentRefusal(socket) : undefined);
  await engine.start();
  // Archives of imports that ended while the server was down (a running import ends Unknown on restart).
  await discardFinishedArchives(store);
  const flushTimer = setInterval(() => {
    auth.flushUses().catch((err: unknown) => logger.warn({ err }, 'could not record API key use'));
  }, 30_000);
  flushTimer.unref();
  const statsFile = base.env.MILLRACE_STATS_FILE;
  const stopStats = statsFile ? startRuntimeStats(statsFile) : undefined;
  const { stop, ...started } = extra;
  const server: MillraceServer = {
    app,
    logger,
    store,
    accounts: core.accounts,
    auth,
    objects: core.objects,
    engine,
    feed,
    ...started,
    reloadTls() {
      if (!tls) return false;
      tls.reload(app.server as unknown as HttpsServer);
      return true;
    },
    async close(closeOptions: { keepAgent?: boolean } = {}) {
      stop();
      clearInterval(flushTimer);
      stopStats?.();
      const agentLeft = closeOptions.keepAgent ? server.localAgent?.leave() : server.localAgent?.stop();
      // No new connections; requests in flight finish (their engine work included). Agent connections are
      // upgraded sockets the HTTP server would wait for: closed now, so the agents retry until the next start.
      const closing = app.close();
      engine.hub.close();
      // Feed streams never end by themselves: ended now, or closing would wait for them.
      feed.close();
      await closing;
      await engine.stop();
      store.onCommit(undefined);
      await auth.flushUses().catch(() => {});
      metrics?.close();
      await store.close();
      base.unmarkServer();
      // Whoever stops the server next (a supervisor, a test removing the data folder) finds the agent gone too.
      await agentLeft;
    },
  };
  return server;
}
