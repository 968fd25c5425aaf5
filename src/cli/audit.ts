import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { exportAudit, verifyAudit } from '../services/audit.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/store.ts';
import { DateParseError, parseDate } from '../time/date-format.ts';

/**
 * `millrace audit verify` and `millrace audit export`: they open the database directly (the data folder or
 * --database), as the account commands do, so they work whether or not the server runs (docs/architecture.md §18).
 */

interface DbFlags {
  data?: string;
  database?: string;
}

const withDb = (cmd: Command): Command =>
  cmd.option('--data <dir>', 'data folder (default ./data)').option('--database <url>', 'postgres:// URL');

async function withStore<T>(flags: DbFlags, fn: (store: Store, zone: string) => Promise<T>): Promise<T> {
  const config = loadConfig({ data: flags.data, database: flags.database });
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    return await fn(store, config.defaultTimeZone);
  } finally {
    await store.close();
  }
}

export function registerAuditCommands(program: Command): void {
  const audit = program.command('audit').description('check and export the audit log');
  withDb(audit.command('verify').description('check the hash chain from the oldest kept entry to the last')).action(
    (f: DbFlags) =>
      withStore(f, async (store) => {
        const result = await verifyAudit(store);
        if (result.problem) {
          process.stderr.write(`audit log broken at entry ${result.problem.id}: ${result.problem.problem}\n`);
          process.exitCode = 1;
          return;
        }
        const from =
          result.firstId === null ? '' : ` (entries ${result.firstId} to ${result.firstId + result.checked - 1})`;
        process.stdout.write(`audit log intact: ${result.checked} entries checked${from}\n`);
      }),
  );
  withDb(audit.command('export').description('write the entries as JSON lines, oldest first'))
    .option('--since <date>', 'entries from this instant ("YYYY/MM/DD HH:MM:SS Zone" or ISO-8601)')
    .action((f: DbFlags & { since?: string }) =>
      withStore(f, async (store, zone) => {
        let since = 0;
        if (f.since !== undefined)
          try {
            since = parseDate(f.since, zone).ms;
          } catch (e) {
            if (e instanceof DateParseError) throw new Error(`--since: ${e.message}`);
            throw e;
          }
        for await (const line of exportAudit(store, since, zone))
          if (!process.stdout.write(`${line}\n`))
            await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
      }),
    );
}
