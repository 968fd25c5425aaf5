import { type Config, interfacePaths } from './config/config.ts';
import { LOCAL_SERVER, superviseLocalAgent } from './engine/local-agent.ts';
import { VERSION } from './version.ts';
import type { MillraceServer, ServerOptions } from './startup/server-types.ts';
import { openData } from './startup/open-data.ts';
import { buildCore } from './startup/core-services.ts';
import { bootstrap } from './startup/first-start.ts';
import { buildJobWork } from './startup/job-work.ts';
import { buildFeed } from './startup/live-feed.ts';
import { buildHttpApp } from './startup/http-app.ts';
import { startServer } from './startup/start-server.ts';

export type { MillraceServer, ServerOptions } from './startup/server-types.ts';

/**
 * The composition root: config → store → services → engine → HTTP app. The only place that wires things. Each step
 * below builds one layer on the ones before it, in the order their effects must happen.
 */
export async function createServer(config: Config, options: ServerOptions = {}): Promise<MillraceServer> {
  const base = await openData(config, options);
  const core = buildCore(config, base);
  const { firstStart, localAgentElsewhere } = await bootstrap(config, base, core);
  const work = buildJobWork(config, base, core);
  const live = buildFeed(config, base, core, () => work.imports.gate.inUse);
  let stopping = false;
  const app = await buildHttpApp(config, base, core, work, live, () => stopping);
  return startServer(base, core, live, app, {
    ...(firstStart ? { firstStart } : {}),
    ...(localAgentElsewhere !== undefined ? { localAgentElsewhere } : {}),
    jobs: work.jobs,
    estimates: work.estimates,
    stop: () => {
      stopping = true;
    },
  });
}

/**
 * Starts listening, then the local agent; once requests are accepted the log gets one line with the dashboard's URL
 * (and the interfaces' bases, the versions of Millrace and of the Node running it).
 */
export async function listen(server: MillraceServer, config: Config): Promise<void> {
  const listening = await server.app.listen({ host: config.host, port: config.port });
  // Fastify names the scheme by its own https option; the server factory made the HTTPS server (http/app.ts).
  const scheme = config.tls ? 'https' : 'http';
  const address = listening.replace(/^http:/, `${scheme}:`);
  const { root, jsonBase, xmlBase } = interfacePaths(config);
  // The URL a person opens (the dashboard); the interfaces' bases beside it for those who script.
  server.logger.info(
    { version: VERSION, node: process.version, api: `${address}${jsonBase}`, xml: `${address}${xmlBase}` },
    `Millrace serving ${address}${root}/ui/`,
  );
  if (config.localAgent && server.localAgentElsewhere !== undefined)
    server.logger.warn(
      { node: server.localAgentElsewhere },
      `no local agent: the agent of node ${server.localAgentElsewhere} serves ${LOCAL_SERVER}, and one agent serves ` +
        'a process server at a time (this node dispatches to the agents connected to it)',
    );
  else if (config.localAgent) {
    // Listening on TCP (listen above), so the address is an object, not a pipe's path.
    const bound = server.app.server.address();
    const port = typeof bound === 'object' && bound !== null ? bound.port : config.port;
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${root}`;
    server.localAgent = superviseLocalAgent(config.dataDir, url, server.logger, {
      watchRoots: config.watchRoots,
      tlsArgs: localAgentTls(config),
      nice: config.localAgentNice,
    });
  }
}

/**
 * The local agent over HTTPS: it trusts exactly the server's own certificate (re-read at each connection, so a
 * certificate renewed on SIGHUP is trusted from then on), and under mutual TLS presents it as its client
 * certificate, holding the server's key (docs/architecture.md §10).
 */
function localAgentTls(config: Config): string[] {
  if (!config.tls) return [];
  const client = config.tls.clientCa ? ['--tls-cert', config.tls.cert, '--tls-key', config.tls.key] : [];
  return ['--server-certificate', config.tls.cert, ...client];
}
