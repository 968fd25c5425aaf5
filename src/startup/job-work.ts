// A step of createServer (main.ts): the job services and CAR import and export.
import { join } from 'node:path';
import { JobEstimates } from '../services/job-estimates.ts';
import { loadTrustedKeys } from '../car/signing.ts';
import type { Config } from '../config/config.ts';
import { BACKUP_DEFINITION, backupRunner } from '../services/backup-job.ts';
import { CarExporter } from '../services/car-export.ts';
import { IMPORT_DEFINITION, ImportService } from '../services/car-import.ts';
import { IMPORT_REQUESTS_AT_ONCE, ImportGate } from '../services/import-gate.ts';
import { importRunner } from '../services/import-job.ts';
import { JobActions } from '../services/job-actions.ts';
import { JobModify } from '../services/job-modify.ts';
import { BulkActions } from '../services/job-bulk.ts';
import { JobService } from '../services/jobs.ts';
import { VERSION } from '../version.ts';
import type { ServerCore } from './core-services.ts';
import type { ServerBase } from './open-data.ts';

/** The job services and CAR import and export, with the engine's runner for import jobs. */
export interface JobWork {
  jobs: JobService;
  actions: JobActions;
  /** PATCH /Job/<id>: a job changed before it starts. */
  modify: JobModify;
  /** Actions on many jobs at once (docs/architecture.md §6). */
  bulk: BulkActions;
  imports: ImportService;
  exporter: CarExporter;
  /** When jobs are expected to start and end, from the runtime statistics (docs/architecture.md §8b). */
  estimates: JobEstimates;
}

export function buildJobWork(config: Config, base: ServerBase, core: ServerCore): JobWork {
  const { store, clock, logger } = base;
  const { engine, objects, auth } = core;
  const jobDeps = { store, clock, engine, defaultTimeZone: config.defaultTimeZone };
  const jobs = new JobService(jobDeps);
  const actions = new JobActions(jobDeps, jobs);
  const modify = new JobModify(jobDeps, jobs);
  const bulk = new BulkActions({
    store,
    engine,
    actions,
    defaultTimeZone: config.defaultTimeZone,
    auditing: { enabled: config.auditJobActions, now: () => clock.now() },
  });
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
    BACKUP_DEFINITION,
    backupRunner({
      store,
      engine,
      clock,
      version: VERSION,
      dataDir: config.dataDir,
      postgres: store.dialect === 'postgres',
      ...(config.jobFilesDir ? { jobFiles: config.jobFilesDir } : {}),
      principalOf: (user) => auth.principalOf(user),
    }),
  );
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
  return { jobs, actions, modify, bulk, imports, exporter, estimates };
}
