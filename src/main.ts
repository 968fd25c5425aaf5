import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { type Config, interfacePaths } from './config/config.ts';
import { buildApp } from './http/app.ts';
import { SecretBox } from './security/secret-box.ts';
import { AccountService } from './services/accounts.ts';
import { Authenticator } from './services/auth.ts';
import { ensureBuiltinObjects, type FirstStartCredentials, initialiseAdmin } from './services/bootstrap.ts';
import { ObjectService } from './services/objects.ts';
import { openStore } from './store/open.ts';
import type { Store } from './store/store.ts';
import { type Clock, systemClock } from './time/clock.ts';
import { VERSION } from './version.ts';

export interface ServerOptions {
  clock?: Clock;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

export interface MillraceServer {
  app: FastifyInstance;
  logger: Logger;
  store: Store;
  accounts: AccountService;
  auth: Authenticator;
  objects: ObjectService;
  /** Secrets generated on the first start of an empty database, to print once. */
  firstStart?: FirstStartCredentials;
  close(): Promise<void>;
}

/** The composition root: config → store → services → HTTP app. The only place that wires things. */
export async function createServer(config: Config, options: ServerOptions = {}): Promise<MillraceServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.logLevel });
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const secrets = SecretBox.load(config.dataDir, (options.env ?? process.env).MILLRACE_SECRET_KEY);
  const accounts = new AccountService(store, clock, { maxKeyLifetimeMs: config.apiKeyMaxLifetimeMs });
  const auth = new Authenticator(store, clock, {
    idleLapseMs: config.apiKeyIdleLapseMs,
    failuresPerMinute: config.authFailuresPerMinute,
  });
  const objects = new ObjectService({ store, clock, secrets, defaultTimeZone: config.defaultTimeZone });
  const firstStart = await initialiseAdmin(store, accounts, options.env ?? process.env);
  await ensureBuiltinObjects(store, objects);
  const app = await buildApp({ config, logger, auth, objects, version: VERSION });
  const flushTimer = setInterval(() => {
    auth.flushUses().catch((err: unknown) => logger.warn({ err }, 'could not record API key use'));
  }, 30_000);
  flushTimer.unref();
  return {
    app,
    logger,
    store,
    accounts,
    auth,
    objects,
    ...(firstStart ? { firstStart } : {}),
    async close() {
      clearInterval(flushTimer);
      await app.close();
      await auth.flushUses().catch(() => {});
      await store.close();
    },
  };
}

/** Starts listening; once requests are accepted the log gets one line with the URL served. */
export async function listen(server: MillraceServer, config: Config): Promise<void> {
  const address = await server.app.listen({ host: config.host, port: config.port });
  server.logger.info(`Millrace serving ${address}${interfacePaths(config).root}`);
}
