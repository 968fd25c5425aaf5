import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { VERSION } from '../version.ts';

/**
 * `millrace backup`, `millrace restore` and `millrace migrate` (docs/architecture.md §17; README "Backup, restore
 * and moving to PostgreSQL"). They work on the data folder and the database directly, not through a server.
 */

const out = (line: string) => process.stdout.write(`${line}\n`);

const PG_DUMP = `
With --database (PostgreSQL), the archive holds what lives outside the database (secret key, trusted CAR keys,
job files in a folder); back the database up with pg_dump, e.g.  pg_dump -Fc -f millrace.dump "$DATABASE_URL"`;

interface BackupFlags {
  data?: string;
  database?: string;
  jobFiles?: string;
  to: string;
}

interface RestoreFlags {
  from: string;
  data: string;
  force?: boolean;
  jobFiles?: string;
}

interface MigrateFlags {
  from: string;
  to: string;
  jobFiles?: string;
  sourceJobFiles?: string;
  batchRows?: string;
}

export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('write a consistent archive of a data folder, also while its server runs')
    .requiredOption('--to <file>', 'the archive to write')
    .option('--data <dir>', 'data folder (env MILLRACE_DATA; default ./data)')
    .option('--database <url>', 'postgres:// URL when the server runs on PostgreSQL (env MILLRACE_DATABASE_URL)')
    .option('--job-files <dir>', 'where the server keeps job files, as its --job-files (env MILLRACE_JOB_FILES)')
    .addHelpText('after', PG_DUMP)
    .action((flags: BackupFlags) => backup(flags));
  program
    .command('restore')
    .description('restore a backup archive into an empty data folder')
    .requiredOption('--from <file>', 'the archive made by millrace backup')
    .requiredOption('--data <dir>', 'data folder to restore into (empty, or give --force)')
    .option('--force', 'replace what the data folder holds')
    .option('--job-files <dir>', 'put the job files in this folder, for a server started with --job-files <dir>')
    .action((flags: RestoreFlags) => restore(flags));
  program
    .command('migrate')
    .description('copy everything a stopped SQLite server holds into PostgreSQL')
    .requiredOption('--from <dir>', 'data folder of the SQLite server (it must be stopped)')
    .requiredOption('--to <url>', 'postgres:// URL of an empty database')
    .option('--job-files <where>', '`database`, or a folder to copy the job files to (default: left where they are)')
    .option('--source-job-files <dir>', "the source server's --job-files folder (default <from>/jobfiles)")
    .option('--batch-rows <n>', 'rows per insert statement (default 500)')
    .action((flags: MigrateFlags) => migrate(flags));
}

async function backup(flags: BackupFlags): Promise<void> {
  const { createBackup } = await import('../backup/backup.ts');
  const config = loadConfig({ data: flags.data, database: flags.database, 'job-files': flags.jobFiles });
  const started = performance.now();
  const s = await createBackup({
    dataDir: config.dataDir,
    postgres: config.databaseUrl !== undefined,
    ...(config.jobFilesDir ? { jobFiles: config.jobFilesDir } : {}),
    to: resolve(flags.to),
    version: VERSION,
    now: new Date(),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  out(`backup written: ${s.file} (${s.bytes} bytes, ${s.files} files, ${seconds} s)`);
  if (s.skipped > 0) out(`${s.skipped} job files were left out: their names cannot be stored in an archive`);
  if (s.database === 'postgres')
    out('the database is PostgreSQL and not in the archive: back it up with pg_dump -Fc (see README.md)');
}

async function restore(flags: RestoreFlags): Promise<void> {
  const { restoreBackup } = await import('../backup/restore.ts');
  const manifest = await restoreBackup({
    from: resolve(flags.from),
    dataDir: resolve(flags.data),
    force: flags.force === true,
    ...(flags.jobFiles ? { jobFiles: resolve(flags.jobFiles) } : {}),
    version: VERSION,
  });
  out(`restored ${manifest.files.length} files made by Millrace ${manifest.millraceVersion} at ${manifest.createdAt}`);
  if (manifest.database === 'postgres')
    out('the archive holds no database (PostgreSQL): restore it with pg_restore from its pg_dump file');
}

async function migrate(flags: MigrateFlags): Promise<void> {
  const { migrateToPostgres } = await import('../backup/migrate.ts');
  const { isPostgresUrl } = await import('../store/open.ts');
  if (!isPostgresUrl(flags.to)) throw new Error(`--to must be a postgres:// URL, not ${flags.to}`);
  const batchRows = flags.batchRows === undefined ? undefined : Number(flags.batchRows);
  if (batchRows !== undefined && !(Number.isInteger(batchRows) && batchRows >= 1))
    throw new Error(`--batch-rows must be a whole number of at least 1, not ${flags.batchRows}`);
  const started = performance.now();
  const counts = await migrateToPostgres({
    from: flags.from,
    to: flags.to,
    ...(flags.jobFiles ? { jobFiles: flags.jobFiles } : {}),
    ...(flags.sourceJobFiles ? { sourceJobFiles: flags.sourceJobFiles } : {}),
    ...(batchRows ? { batchRows } : {}),
    say: out,
  });
  const seconds = (performance.now() - started) / 1000;
  const rows = counts.reduce((sum, c) => sum + c.source, 0);
  out('table                  SQLite  PostgreSQL');
  for (const c of counts)
    out(`${c.table.padEnd(20)} ${String(c.source).padStart(8)} ${String(c.destination).padStart(11)}`);
  const differ = counts.filter((c) => c.source !== c.destination).map((c) => c.table);
  if (differ.length > 0) throw new Error(`the counts differ for ${differ.join(', ')}: run the command again`);
  out(`counts match: ${rows} rows in ${seconds.toFixed(1)} s (${Math.round(rows / seconds)} rows/s)`);
  out(`start the servers with --database ${flags.to.replace(/\/\/[^@/]*@/, '//…@')}`);
}
