// The second step of createServer (main.ts): the services every other part uses (accounts, sign-in, the
// cluster, the engine with its job files and alert deliveries, the object service).
import { createHash, timingSafeEqual } from 'node:crypto';
import { sendMail } from '../alerts/mail.ts';
import { loadWebhookSecret, postWebhook } from '../alerts/webhook.ts';
import { type Config, interfacePaths } from '../config/config.ts';
import type { AlertSenders } from '../engine/alert-worker.ts';
import { Cluster } from '../engine/cluster.ts';
import { type DiskFullWatch, folderProbe, watchedJobFiles } from '../engine/disk-full.ts';
import { Engine } from '../engine/engine.ts';
import { DatabaseJobFiles, DiskJobFiles, type JobFileStore } from '../engine/job-files.ts';
import { AccountService } from '../services/accounts.ts';
import { Authenticator } from '../services/auth.ts';
import { ObjectService } from '../services/objects.ts';
import { SharedFailureCounts } from '../services/shared-failure-counts.ts';
import type { Store } from '../store/store.ts';
import { VERSION } from '../version.ts';
import type { ServerBase } from './open-data.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The services every other part uses: accounts, sign-in, the cluster, the engine and the object service. */
export interface ServerCore {
  accounts: AccountService;
  auth: Authenticator;
  cluster: Cluster;
  engine: Engine;
  objects: ObjectService;
  /** The address other nodes and exported CARs name this node by. */
  address: string;
}

export function buildCore(config: Config, base: ServerBase): ServerCore {
  const { store, clock, logger, secrets } = base;
  const accounts = new AccountService(store, clock, { maxKeyLifetimeMs: config.apiKeyMaxLifetimeMs });
  const auth = new Authenticator(store, clock, {
    idleLapseMs: config.apiKeyIdleLapseMs,
    failuresPerMinute: config.authFailuresPerMinute,
    passwords: !config.oidc?.only,
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
    auditRetentionMs: config.auditRetentionDays * 24 * 3600 * 1000,
    auditJobActions: config.auditJobActions,
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
