import { createHash, timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createLogger } from './log/logger.ts';
import { Metrics } from './metrics/metrics.ts';
import { type Config, interfacePaths } from './config/config.ts';
import { Cluster, nodeIdentity } from './engine/cluster.ts';
import { Engine } from './engine/engine.ts';
import { DiskFullWatch, folderProbe, watchedJobFiles } from './engine/disk-full.ts';
import { DatabaseJobFiles, DiskJobFiles, type JobFileStore } from './engine/job-files.ts';
import {
  ensureLocalSecret,
  LOCAL_SERVER,
  type LocalAgent,
  superviseLocalAgent,
  writeLocalSecret,
} from './engine/local-agent.ts';
import { buildApp } from './http/app.ts';
import { LoadReport } from './services/load.ts';
import { Sessions } from './services/sessions.ts';
import { requireType } from './model/registry.ts';
import { startRuntimeStats } from './runtime-stats.ts';
import { SecretBox } from './security/secret-box.ts';
import { AccountService } from './services/accounts.ts';
import { Authenticator } from './services/auth.ts';
import { SharedFailureCounts } from './services/shared-failure-counts.ts';
import { EventService } from './services/events.ts';
import { ensureBuiltinObjects, type FirstStartCredentials, initialiseAdmin } from './services/bootstrap.ts';
import { JobActions } from './services/job-actions.ts';
import { JobService } from './services/jobs.ts';
import { WaitingService } from './services/waiting.ts';
import { ObjectService } from './services/objects.ts';
import { WindowOpenings } from './services/window-openings.ts';
import { JobEstimates } from './services/job-estimates.ts';
import { RuntimeAnswers } from './services/runtime-answers.ts';
import { Alerts } from './services/alerts.ts';
import { loadWebhookSecret, postWebhook } from './alerts/webhook.ts';
import { sendMail } from './alerts/mail.ts';
import type { AlertSenders } from './engine/alert-worker.ts';
import { OperatorMessages } from './services/operator-messages.ts';
import { UserMessages } from './services/user-messages.ts';
import { processServerAction } from './services/process-servers.ts';
import { ForecastService } from './services/forecast.ts';
import { DeadlineService } from './services/deadlines.ts';
import { openStore } from './store/open.ts';
import { Feed } from './feed/feed.ts';
import { FEED_OBJECT_TYPES } from './feed/feed-events.ts';
import type { Store } from './store/store.ts';
import { type Clock, systemClock } from './time/clock.ts';
import { VERSION, VERSION_STRING } from './version.ts';
import { loadTrustedKeys } from './car/signing.ts';
import { CarExporter } from './services/car-export.ts';
import { IMPORT_DEFINITION, ImportService } from './services/car-import.ts';
import { IMPORT_REQUESTS_AT_ONCE, ImportGate } from './services/import-gate.ts';
import { discardFinishedArchives, importRunner } from './services/import-job.ts';

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
   * Stops accepting requests, lets those in flight finish, stops the engine and closes the database. With
   * `keepAgent` (SIGTERM) the local agent is told its server stops: it exits (awaited here) unless jobs run, and
   * then stays for them: they carry on and report to the next start.
   */
  close(options?: { keepAgent?: boolean }): Promise<void>;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The composition root: config → store → services → engine → HTTP app. The only place that wires things. Each step
 * below builds one layer on the ones before it, in the order their effects must happen.
 */
export async function createServer(config: Config, options: ServerOptions = {}): Promise<MillraceServer> {
  const base = await openData(config, options);
  const core = buildCore(config, base);
  const { firstStart, localAgentElsewhere } = await bootstrap(config, base, core);
  const work = buildJobWork(config, base, core);
  const live = buildFeed(config, base, core);
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

/** What every later step builds on: the clock, the log, the data folder's store and the secret key. */
interface ServerBase {
  clock: Clock;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  nodeId: string;
  diskFull: DiskFullWatch;
  store: Store;
  secrets: SecretBox;
}

/** Creates the data folder, opens the store (watching its disk) and loads the secret key. */
async function openData(config: Config, options: ServerOptions): Promise<ServerBase> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel, config.logFormat);
  const env = options.env ?? process.env;
  // The data folder holds the secret key, job files and agent folders on PostgreSQL too.
  mkdirSync(config.dataDir, { recursive: true });
  // Where public keys trusted for signed CARs go (README: `cp release.pub <data>/trusted-keys/`).
  mkdirSync(join(config.dataDir, 'trusted-keys'), { recursive: true });
  const nodeId = nodeIdentity(config.dataDir, config.nodeId);
  const diskFull = new DiskFullWatch(logger);
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    node: { id: nodeId, version: VERSION, aliveMs: config.timerLeaseMs, migrateAnyway: config.migrateBesideOlderNodes },
    onDiskFull: (err) => diskFull.noted('database', err),
    runtimeStatistics: config.runtimeStatistics,
  });
  const sqliteFolder = folderProbe(config.dataDir);
  diskFull.probeWith(
    'database',
    store.dialect === 'sqlite'
      ? async () => {
          await sqliteFolder();
          await store.probeSpace();
        }
      : () => store.probeSpace(),
  );
  const secrets = SecretBox.load(config.dataDir, env.MILLRACE_SECRET_KEY);
  return { clock, logger, env, nodeId, diskFull, store, secrets };
}

/** The services every other part uses: accounts, sign-in, the cluster, the engine and the object service. */
interface ServerCore {
  accounts: AccountService;
  auth: Authenticator;
  cluster: Cluster;
  engine: Engine;
  objects: ObjectService;
  /** The address other nodes and exported CARs name this node by. */
  address: string;
}

function buildCore(config: Config, base: ServerBase): ServerCore {
  const { store, clock, logger, secrets } = base;
  const accounts = new AccountService(store, clock, { maxKeyLifetimeMs: config.apiKeyMaxLifetimeMs });
  const auth = new Authenticator(store, clock, {
    idleLapseMs: config.apiKeyIdleLapseMs,
    failuresPerMinute: config.authFailuresPerMinute,
    // Nodes on one PostgreSQL count failed sign-ins together (docs/architecture.md §16); one SQLite node in memory.
    ...(store.dialect === 'postgres' ? { failureCounts: new SharedFailureCounts(store.authFailures) } : {}),
  });
  const paths = interfacePaths(config);
  const address = `http://${config.host}:${config.port}${paths.root}`;
  const cluster =
    store.dialect === 'postgres'
      ? Cluster.shared({ store, logger, id: base.nodeId, version: VERSION, address, leaseMs: config.timerLeaseMs })
      : Cluster.solo();
  const engine = new Engine({
    store,
    clock,
    logger,
    cluster,
    files: jobFiles(config, store, base.diskFull),
    rootPath: paths.root,
    killGraceMs: config.killGraceMs,
    historyRetentionMs: config.historyRetentionDays * 24 * 3600 * 1000,
    secrets,
    alertSenders: alertSenders(config, base.env),
    async verifyAgentSecret(processServer, secret) {
      const sealed = (await store.getObject('ProcessServer', processServer))?.data.AgentSecret;
      if (typeof sealed !== 'string' || secret === '') return false;
      try {
        return timingSafeEqual(digest(secrets.decrypt(sealed)), digest(secret));
      } catch {
        return false; // sealed with another key
      }
    },
  });
  const objects = new ObjectService({
    store,
    clock,
    secrets,
    defaultTimeZone: config.defaultTimeZone,
    webhookAllow: config.webhookAllow,
    onChange: (type, before, after) => engine.objectChanged(type, before, after),
  });
  return { accounts, auth, cluster, engine, objects, address };
}

/** The first start's admin, the built-in objects, and whether this node's local agent is the one that serves. */
async function bootstrap(
  config: Config,
  base: ServerBase,
  core: ServerCore,
): Promise<{ firstStart: FirstStartCredentials | undefined; localAgentElsewhere: string | undefined }> {
  const { store, secrets } = base;
  const firstStart = await initialiseAdmin(store, core.accounts, base.env);
  await ensureBuiltinObjects(store, core.objects);
  // One agent serves a process server at a time (docs/architecture.md §16): beside a live node whose agent serves GLOBAL.Local, this
  // node starts none, and leaves the secret that agent proves alone.
  const localAgentElsewhere = config.localAgent ? await core.cluster.heldElsewhere(LOCAL_SERVER) : undefined;
  if (localAgentElsewhere === undefined) await sealLocalSecret(store, secrets, config.dataDir);
  return { firstStart, localAgentElsewhere };
}

/** The job services and CAR import and export, with the engine's runner for import jobs. */
interface JobWork {
  jobs: JobService;
  actions: JobActions;
  imports: ImportService;
  exporter: CarExporter;
  /** When jobs are expected to start and end, from the runtime statistics (docs/architecture.md §8b). */
  estimates: JobEstimates;
}

function buildJobWork(config: Config, base: ServerBase, core: ServerCore): JobWork {
  const { store, clock, logger } = base;
  const { engine, objects, auth } = core;
  const jobDeps = { store, clock, engine, defaultTimeZone: config.defaultTimeZone };
  const jobs = new JobService(jobDeps);
  const actions = new JobActions(jobDeps, jobs);
  // The global bound on import memory: archive requests (body ≤ 64 MiB, checked one entry at a time) and import
  // jobs (the archive inflated, ≤ 512 MiB, and parsed) each take a slot of their own gate.
  const imports = new ImportService({
    gate: new ImportGate(IMPORT_REQUESTS_AT_ONCE, config.limits.importQueue),
    store,
    engine,
    jobs,
    trustedKeys: () => loadTrustedKeys([join(config.dataDir, 'trusted-keys'), ...config.trustedKeys]),
  });
  engine.registerSystemRunner(
    IMPORT_DEFINITION,
    importRunner({
      store,
      engine,
      objects,
      clock,
      logger,
      gate: new ImportGate(config.limits.importConcurrency, 0),
      principalOf: (user) => auth.principalOf(user),
    }),
  );
  const exporter = new CarExporter({ store, objects, sourceAddress: core.address });
  const estimates = new JobEstimates({ store, clock });
  // Deadlines judge runs by their estimated end (docs/architecture.md §8c).
  engine.deadlines.useEstimates(estimates);
  return { jobs, actions, imports, exporter, estimates };
}

/** The live feed (fed by every commit, and by other nodes' commits) and the metrics, when asked for. */
interface LiveParts {
  feed: Feed;
  metrics: Metrics | undefined;
}

function buildFeed(config: Config, base: ServerBase, core: ServerCore): LiveParts {
  const { store, clock } = base;
  const { engine, cluster } = core;
  // The live feed hears of every commit; published after it, never for a rollback.
  const feed = new Feed({
    clock,
    zone: config.defaultTimeZone,
    retain: config.feedRetainEvents,
    clientBufferBytes: config.feedClientBufferBytes,
  });
  store.onCommit((committed) => {
    const items = feed.publish(committed);
    if (items.length > 0) cluster.tell({ k: 'feed', items });
  }, FEED_OBJECT_TYPES);
  engine.onClusterFeed((items) => feed.publishItems(items));
  const metrics = config.metrics ? new Metrics({ store, hub: engine.hub }) : undefined;
  if (metrics) engine.deadlines.onRaised((kind) => metrics.deadlineAlert(kind));
  return { feed, metrics };
}

/** The HTTP app serving both interfaces, the dashboard and the operations routes over the services. */
function buildHttpApp(
  config: Config,
  base: ServerBase,
  core: ServerCore,
  work: JobWork,
  live: LiveParts,
  stopping: () => boolean,
): Promise<FastifyInstance> {
  const { store, clock, logger } = base;
  const { engine, objects, auth } = core;
  const { jobs } = work;
  const processServer = requireType('ProcessServer');
  return buildApp({
    ops: {
      store,
      engineRunning: () => engine.running,
      stopping,
      diskFull: () => base.diskFull.reason(),
      ...(live.metrics ? { metrics: live.metrics } : {}),
      ...(config.metricsToken ? { metricsToken: config.metricsToken } : {}),
    },
    config,
    logger,
    auth,
    objects,
    jobs: {
      jobs,
      actions: work.actions,
      waiting: new WaitingService({ store, engine, jobs }),
      processServerAction: (principal, key, action) => processServerAction({ store, engine }, principal, key, action),
      processServerText: (principal, key) => objects.getText(principal, processServer, key),
    },
    messages: {
      operator: new OperatorMessages(engine, clock),
      user: new UserMessages(engine, clock),
      alerts: new Alerts(engine, clock),
      objects,
    },
    events: new EventService({ engine, clock, defaultTimeZone: config.defaultTimeZone }),
    imports: work.imports,
    forecast: new ForecastService({ store, clock, defaultTimeZone: config.defaultTimeZone }),
    deadlines: new DeadlineService({
      store,
      clock,
      defaultTimeZone: config.defaultTimeZone,
      estimator: work.estimates,
    }),
    feed: live.feed,
    exporter: work.exporter,
    windows: new WindowOpenings({ store, objects, defaultTimeZone: config.defaultTimeZone }),
    runtime: new RuntimeAnswers({
      store,
      objects,
      jobs,
      estimates: work.estimates,
      defaultTimeZone: config.defaultTimeZone,
    }),
    store,
    dashboard: {
      sessions: new Sessions(auth, clock),
      load: new LoadReport(store, (ps) => engine.hub.isConnected(ps)),
    },
    version: VERSION,
    versionString: VERSION_STRING,
  });
}

/**
 * Starts the engine on the built app, then the periodic work (API key uses recorded every 30 s, the runtime stats
 * file); `close` stops them all in the reverse order.
 */
async function startServer(
  base: ServerBase,
  core: ServerCore,
  live: LiveParts,
  app: FastifyInstance,
  extra: Pick<MillraceServer, 'firstStart' | 'localAgentElsewhere' | 'jobs' | 'estimates'> & { stop: () => void },
): Promise<MillraceServer> {
  const { store, logger } = base;
  const { engine, auth } = core;
  const { feed, metrics } = live;
  engine.hub.attach(app.server);
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
      // Whoever stops the server next (a supervisor, a test removing the data folder) finds the agent gone too.
      await agentLeft;
    },
  };
  return server;
}

/**
 * Where job files are kept (`--job-files`): in the database (whose full disk the store tells), or in a folder whose
 * refused writes mark the job files' disk full until a probe write there succeeds.
 */
function jobFiles(config: Config, store: Store, diskFull: DiskFullWatch): JobFileStore {
  if (config.jobFilesDir === 'database') return new DatabaseJobFiles(store.jobFileChunks);
  const disk = new DiskJobFiles(config.dataDir, config.jobFilesDir);
  diskFull.probeWith('job files', folderProbe(disk.root));
  return watchedJobFiles(disk, diskFull);
}

/**
 * GLOBAL.Local's AgentSecret is the local agent's secret file; set (encrypted) when it differs. On PostgreSQL the
 * nodes share it instead: a node whose data folder has another takes the database's (when its key opens it), so
 * that no node's start locks out the agent another node's start sealed (docs/architecture.md §16).
 */
async function sealLocalSecret(store: Store, secrets: SecretBox, dataDir: string): Promise<void> {
  const ps = await store.getObject('ProcessServer', LOCAL_SERVER);
  const secret = ensureLocalSecret(dataDir);
  if (!ps) return;
  const sealed = ps.data.AgentSecret;
  const current = typeof sealed === 'string' ? safeDecrypt(secrets, sealed) : undefined;
  if (current === secret) return;
  if (current !== undefined && store.dialect === 'postgres') {
    writeLocalSecret(dataDir, current);
    return;
  }
  await store.patchObjectData(ps.uniqueId, { ...ps.data, AgentSecret: secrets.encrypt(secret) });
}

/**
 * Starts listening, then the local agent; once requests are accepted the log gets one line with the dashboard's URL
 * (and the interfaces' bases, the versions of Millrace and of the Node running it).
 */
export async function listen(server: MillraceServer, config: Config): Promise<void> {
  const address = await server.app.listen({ host: config.host, port: config.port });
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
    const { port } = server.app.server.address() as { port: number };
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${root}`;
    server.localAgent = superviseLocalAgent(config.dataDir, url, server.logger);
  }
}

function safeDecrypt(secrets: SecretBox, sealed: string): string | undefined {
  try {
    return secrets.decrypt(sealed);
  } catch {
    return undefined;
  }
}

/** Alert deliveries as configured: webhooks signed with the webhook secret, mail through MILLRACE_SMTP_URL. */
function alertSenders(config: Config, env: NodeJS.ProcessEnv): AlertSenders {
  const secret = config.webhookSecret ?? loadWebhookSecret(config.dataDir, env);
  const smtp = config.smtp;
  return {
    webhook: (url, body) => postWebhook({ url, body, secret, allow: config.webhookAllow }),
    mail: (to, subject, text) =>
      smtp
        ? sendMail(smtp, { to, subject, text })
        : Promise.reject(new Error('e-mail delivery is not configured (MILLRACE_SMTP_URL)')),
  };
}
