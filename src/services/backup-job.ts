import { mkdir, readdir, rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { createBackup } from '../backup/backup.ts';
import { itemAt } from '../domain/item-at.ts';
import type { JobRecord } from '../domain/job.ts';
import type { Engine, SystemRunner } from '../engine/engine.ts';
import type { FinalOutcome } from '../engine/kernel.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';

export const BACKUP_DEFINITION = 'GLOBAL.System_Backup';
const DEFAULT_KEEP = 7;
/** The archives a backup job writes and prunes: it never touches another file of the folder. */
const ARCHIVE_NAME = /^millrace-backup-\d{8}-\d{6}-\d{3}\.zip$/;

export interface BackupJobDeps {
  store: Store;
  engine: Engine;
  clock: Clock;
  version: string;
  dataDir: string;
  postgres: boolean;
  jobFiles?: string;
  /** The submitting user's privileges, read when the job runs. */
  principalOf(user: string): Promise<Principal | null>;
}

/** `millrace-backup-20261126-132500-000.zip`: the job's time in UTC, so the names sort as the archives were made. */
export function archiveName(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-26T13:25:00.000Z
  return `millrace-backup-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}-${iso.slice(20, 23)}.zip`;
}

/**
 * Runs GLOBAL.System_Backup jobs (docs/architecture.md §17): an online backup of this server's data folder into
 * `TargetFolder` (the database copied in a worker thread, the files streamed: the event loop goes on serving),
 * then the oldest archives beyond `Keep` removed. Its stdout.log and note say what was written and removed.
 */
export function backupRunner(d: BackupJobDeps): SystemRunner {
  return async (job: JobRecord) => {
    const lines: string[] = [];
    let outcome: FinalOutcome;
    try {
      const note = await runBackup(d, job, lines);
      outcome = { status: 'Completed', returnCode: 0, notes: [note] };
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      lines.push(`backup failed: ${why}`);
      outcome = { status: 'Error', returnCode: 1, notes: [`The backup failed: ${why}`] };
    }
    await finish(d, job, lines, outcome);
  };
}

async function runBackup(d: BackupJobDeps, job: JobRecord, lines: string[]): Promise<string> {
  // The archive holds the secret key: only who may change the stored secrets may have one written.
  const p = await d.principalOf(job.submittedBy);
  if (!p || !can(p, 'Credential', 'GLOBAL', 'Edit'))
    throw new Error(
      `${job.submittedBy} may not back up the server: that needs the Edit privilege on Credential in GLOBAL`,
    );
  const param = (name: string) => job.data.parameters.find((p) => p.Name === name);
  const folder = param('TargetFolder')?.InValueString ?? '';
  if (!isAbsolute(folder)) throw new Error(`TargetFolder must be an absolute path, not ${JSON.stringify(folder)}`);
  const keep = param('Keep')?.InValueNumber ?? DEFAULT_KEEP;
  if (!Number.isInteger(keep) || keep < 1) throw new Error(`Keep must be a whole number of at least 1, not ${keep}`);
  await mkdir(folder, { recursive: true });
  const s = await createBackup({
    dataDir: d.dataDir,
    postgres: d.postgres,
    ...(d.jobFiles ? { jobFiles: d.jobFiles } : {}),
    to: join(folder, archiveName(d.clock.now())),
    version: d.version,
    now: new Date(d.clock.now()),
  });
  lines.push(`written ${s.file}: ${s.bytes} bytes, ${s.files} files`);
  if (s.database === 'postgres') lines.push('the database is PostgreSQL: it is backed up with pg_dump, not here');
  const archives = (await readdir(folder)).filter((n) => ARCHIVE_NAME.test(n)).sort();
  const old = archives.slice(0, Math.max(0, archives.length - keep));
  for (const name of old) {
    await rm(join(folder, name), { force: true });
    lines.push(`removed ${join(folder, name)}`);
  }
  return `Backup written to ${s.file}; ${Math.min(archives.length, keep)} kept, ${old.length} removed`;
}

/** Ends the job with its log as stdout.log, in one transaction (unless it was killed meanwhile). */
async function finish(d: BackupJobDeps, job: JobRecord, lines: string[], outcome: FinalOutcome): Promise<void> {
  const text = Buffer.from(`${lines.join('\n')}\n`);
  await d.engine.files.replace(job.jobId, 'stdout.log', text);
  await d.engine.mutate(async (tx, fx, k) => {
    const current = await tx.jobs.get(job.jobId);
    if (current?.status !== 'Running') return;
    const uniqueId = itemAt(await tx.nextUniqueIds(1), 0);
    await tx.jobs.insertFiles([
      {
        uniqueId,
        jobId: job.jobId,
        name: 'stdout.log',
        fileOrder: 1,
        type: 'Output',
        format: 'text/plain',
        size: text.length,
      },
    ]);
    await k.finish(tx, current, outcome, d.clock.now(), fx);
  });
}
