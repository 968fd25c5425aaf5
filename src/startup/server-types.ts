// What createServer (main.ts) takes and gives: kept apart so that the steps in this folder can name the server
// they build without importing main.ts.
import type { FastifyInstance } from 'fastify';
import type { JobEstimates } from '../services/job-estimates.ts';
import type { Logger } from 'pino';
import type { Engine } from '../engine/engine.ts';
import type { LocalAgent } from '../engine/local-agent.ts';
import type { Feed } from '../feed/feed.ts';
import type { AccountService } from '../services/accounts.ts';
import type { Authenticator } from '../services/auth.ts';
import type { FirstStartCredentials } from '../services/bootstrap.ts';
import type { JobService } from '../services/jobs.ts';
import type { ObjectService } from '../services/objects.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';

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
  engine: Engine;
  jobs: JobService;
  /** When jobs are expected to start and end (docs/architecture.md §8b). */
  estimates: JobEstimates;
  feed: Feed;
  /** Secrets generated on the first start of an empty database, to print once. */
  firstStart?: FirstStartCredentials;
  /** The local agent kept running by `listen`, if any. */
  localAgent?: LocalAgent;
  /** Another live node whose agent serves GLOBAL.Local: `listen` then starts none (docs/architecture.md §16). */
  localAgentElsewhere?: string;
  /**
   * Reads the TLS certificate, key and client CA again for new connections (SIGHUP); false when serving plain
   * HTTP. Throws, keeping the current ones, when a file cannot be read or the key does not fit.
   */
  reloadTls(): boolean;
  /**
   * Stops accepting requests, lets those in flight finish, stops the engine and closes the database. With
   * `keepAgent` (SIGTERM) the local agent is told its server stops: it exits (awaited here) unless jobs run, and
   * then stays for them: they carry on and report to the next start.
   */
  close(options?: { keepAgent?: boolean }): Promise<void>;
}
