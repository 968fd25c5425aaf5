// The first step of createServer (main.ts): the data folder, the store watching its disk, the secret key.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { markServer } from '../backup/server-pid.ts';
import type { Config } from '../config/config.ts';
import { nodeIdentity } from '../engine/cluster.ts';
import { DiskFullWatch, folderProbe } from '../engine/disk-full.ts';
import { createLogger } from '../log/logger.ts';
import { SecretBox } from '../security/secret-box.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/store.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { VERSION } from '../version.ts';
import type { ServerOptions } from './server-types.ts';

/** What every later step builds on: the clock, the log, the data folder's store and the secret key. */
export interface ServerBase {
  clock: Clock;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  nodeId: string;
  diskFull: DiskFullWatch;
  store: Store;
  secrets: SecretBox;
  /** Removes the mark that a server uses the data folder (`millrace migrate` and `restore --force` look for it). */
  unmarkServer: () => void;
}

/** Creates the data folder, opens the store (watching its disk) and loads the secret key. */
export async function openData(config: Config, options: ServerOptions): Promise<ServerBase> {
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
    runtimeStatistics: config.runtimeStatistics,
    node: { id: nodeId, version: VERSION, aliveMs: config.timerLeaseMs, migrateAnyway: config.migrateBesideOlderNodes },
    onDiskFull: (err) => diskFull.noted('database', err),
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
  // Tells `millrace migrate` and `restore --force` that a server uses the folder (removed by close).
  const unmarkServer = markServer(config.dataDir);
  return { clock, logger, env, nodeId, diskFull, store, secrets, unmarkServer };
}
