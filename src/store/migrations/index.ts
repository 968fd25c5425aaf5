import type { MigrationProvider } from 'kysely';
import type { Dialect, Up } from './dialect.ts';
import * as m0001 from './0001_objects_and_security.ts';
import * as m0002 from './0002_jobs.ts';
import * as m0003 from './0003_job_indexes.ts';
import * as m0004 from './0004_events.ts';
import * as m0005 from './0005_alert_work.ts';
import * as m0006 from './0006_blobs.ts';
import * as m0007 from './0007_job_history.ts';
import * as m0008 from './0008_job_list_indexes.ts';
import * as m0009 from './0009_chain_structures.ts';
import * as m0010 from './0010_cluster.ts';
import * as m0011 from './0011_job_definition_type.ts';
import * as m0012 from './0012_auth_failures.ts';
import * as m0013 from './0013_agent_instance.ts';
import * as m0014 from './0014_runtime_statistics.ts';
import * as m0015 from './0015_max_run_due.ts';
import * as m0016 from './0016_file_raises.ts';
import * as m0017 from './0017_event_sequences.ts';
import * as m0018 from './0018_sessions.ts';
import * as m0019 from './0019_audit_log.ts';
import * as m0020 from './0020_objects_version.ts';

/**
 * Every migration in the order it runs, one file each, named `NNNN_<what>.ts` with the name the database records
 * (Kysely's `kysely_migration` table). Append-only: never edit a migration that has been released, add the next
 * number instead; a renamed one would run again on every existing database. The imports are explicit (no
 * directory scan) so the build compiles them and the import rules see them.
 */
export const migrations: readonly { readonly name: string; readonly up: Up }[] = [
  { name: '0001_objects_and_security', up: m0001.up },
  { name: '0002_jobs', up: m0002.up },
  { name: '0003_job_indexes', up: m0003.up },
  { name: '0004_events', up: m0004.up },
  { name: '0005_alert_work', up: m0005.up },
  { name: '0006_blobs', up: m0006.up },
  { name: '0007_job_history', up: m0007.up },
  { name: '0008_job_list_indexes', up: m0008.up },
  { name: '0009_chain_structures', up: m0009.up },
  { name: '0010_cluster', up: m0010.up },
  { name: '0011_job_definition_type', up: m0011.up },
  { name: '0012_auth_failures', up: m0012.up },
  { name: '0013_agent_instance', up: m0013.up },
  { name: '0014_runtime_statistics', up: m0014.up },
  { name: '0015_max_run_due', up: m0015.up },
  { name: '0016_file_raises', up: m0016.up },
  { name: '0017_event_sequences', up: m0017.up },
  { name: '0018_sessions', up: m0018.up },
  { name: '0019_audit_log', up: m0019.up },
  { name: '0020_objects_version', up: m0020.up },
];

/** The migrations as Kysely's Migrator takes them, each bound to the dialect of the database it runs on. */
export const migrationProvider = (dialect: Dialect): MigrationProvider => ({
  async getMigrations() {
    return Object.fromEntries(migrations.map(({ name, up }) => [name, { up: (db) => up(db, dialect) }]));
  },
});
