// A step of createServer (main.ts): the HTTP app over the services built before it.
import type { FastifyInstance } from 'fastify';
import { DeadlineService } from '../services/deadlines.ts';
import { RuntimeAnswers } from '../services/runtime-answers.ts';
import type { Config } from '../config/config.ts';
import { buildApp } from '../http/app.ts';
import { requireType } from '../model/registry.ts';
import { Alerts } from '../services/alerts.ts';
import { EventService } from '../services/events.ts';
import { ForecastService } from '../services/forecast.ts';
import { AuditService } from '../services/audit.ts';
import { LoadReport } from '../services/load.ts';
import { OperatorMessages } from '../services/operator-messages.ts';
import { processServerAction } from '../services/process-servers.ts';
import { Sessions } from '../services/sessions.ts';
import { UserMessages } from '../services/user-messages.ts';
import { WaitingService } from '../services/waiting.ts';
import { WindowOpenings } from '../services/window-openings.ts';
import { FileWatchStatus } from '../services/file-watch-status.ts';
import { VERSION, VERSION_STRING } from '../version.ts';
import type { ServerCore } from './core-services.ts';
import type { JobWork } from './job-work.ts';
import type { LiveParts } from './live-feed.ts';
import type { ServerBase } from './open-data.ts';
import { buildSingleSignOn } from './single-sign-on.ts';

/** The HTTP app serving both interfaces, the dashboard and the operations routes over the services. */
export async function buildHttpApp(
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
  const sso = await buildSingleSignOn(config, base, core);
  return buildApp({
    ...(sso ? { sso } : {}),
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
      modify: work.modify,
      bulk: work.bulk,
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
    audit: new AuditService({ store, clock, objects, defaultTimeZone: config.defaultTimeZone }),
    feed: live.feed,
    exporter: work.exporter,
    windows: new WindowOpenings({ store, objects, defaultTimeZone: config.defaultTimeZone }),
    deadlines: new DeadlineService({
      store,
      clock,
      defaultTimeZone: config.defaultTimeZone,
      estimator: work.estimates,
    }),
    runtime: new RuntimeAnswers({
      store,
      objects,
      jobs,
      estimates: work.estimates,
      defaultTimeZone: config.defaultTimeZone,
    }),
    fileWatches: new FileWatchStatus({ store, objects, defaultTimeZone: config.defaultTimeZone }),
    store,
    accounts: core.accounts,
    defaultTimeZone: config.defaultTimeZone,
    dashboard: {
      sessions: new Sessions(auth, store.sessions, clock),
      load: new LoadReport(store, (ps) => engine.hub.isConnected(ps)),
    },
    version: VERSION,
    versionString: VERSION_STRING,
  });
}
