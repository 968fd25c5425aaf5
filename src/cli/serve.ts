import type { Command } from 'commander';
import { DEFAULTS, loadConfig } from '../config/config.ts';
import { createServer, listen } from '../main.ts';

/** Settings read only from the environment, listed under `serve --help`. */
const ENVIRONMENT = `
Environment only (see README.md):
  MILLRACE_ADMIN_API_KEY, MILLRACE_ADMIN_PASSWORD  the administrator's key and password on the first start
                                                   (default: generated and printed once)
  MILLRACE_SECRET_KEY        base64 keys of stored secrets (default: <data>/secret.key, made on first start)
  MILLRACE_HISTORY_DAYS      days finished jobs are kept (default 30)
  MILLRACE_CORS_ORIGINS      comma-separated origins browsers may call from (default: none, CORS off)
  MILLRACE_TRUSTED_KEYS      extra public keys (files or folders) trusted for signed CARs
                             (default: only <data>/trusted-keys/)
  MILLRACE_WEBHOOK_ALLOW     internal hosts, IPs or CIDRs webhooks may reach (default: none)
  MILLRACE_WEBHOOK_SECRET    webhook signing secret (default: <data>/webhook.key)
  MILLRACE_SMTP_URL, MILLRACE_MAIL_FROM  mail server for e-mail alerts (default: none; millrace@localhost)
  MILLRACE_STATS_FILE        append RSS and event-loop delay once a second to this file (default: off)`;

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('start the server (embedded SQLite in the data folder unless --database names PostgreSQL)')
    .option(
      '--data <dir>',
      `data folder: SQLite database, keys, job files (env MILLRACE_DATA, default ${DEFAULTS.dataDir})`,
    )
    .option('--port <n>', `TCP port (env MILLRACE_PORT, default ${DEFAULTS.port})`)
    .option('--host <host>', `address to listen on (env MILLRACE_HOST, default ${DEFAULTS.host})`)
    .option(
      '--context <path>',
      `context path, may be empty or hold / (env MILLRACE_CONTEXT, default ${DEFAULTS.context})`,
    )
    .option(
      '--database <url>',
      'postgres:// URL to use PostgreSQL (env MILLRACE_DATABASE_URL, default: SQLite in --data)',
    )
    .option(
      '--vendor <name>',
      `<name>_RestService in the JSON path and the X-<name>- header prefix (env MILLRACE_VENDOR, default ${DEFAULTS.vendor})`,
    )
    .option(
      '--vendor-folder <name>',
      'folder segment External/<name>/ of the JSON path (env MILLRACE_VENDOR_FOLDER, default: the vendor name)',
    )
    .option(
      '--time-zone <zone>',
      `IANA zone of dates given without one and of dates the server writes (env MILLRACE_TIME_ZONE, default ${DEFAULTS.defaultTimeZone})`,
    )
    .option(
      '--log-level <level>',
      `fatal, error, warn, info, debug, trace or silent (env MILLRACE_LOG_LEVEL, default ${DEFAULTS.logLevel})`,
    )
    .addHelpText('after', ENVIRONMENT)
    .action(
      async (flags: {
        data?: string;
        port?: string;
        host?: string;
        context?: string;
        database?: string;
        vendor?: string;
        vendorFolder?: string;
        timeZone?: string;
        logLevel?: string;
      }) => {
        const config = loadConfig(flags);
        const server = await createServer(config);
        if (server.firstStart) {
          const { user, password, apiKey } = server.firstStart;
          const lines = [`First start: administrator "${user}" created.`];
          if (password) lines.push(`  password: ${password}`);
          if (apiKey) lines.push(`  API key:  ${apiKey}`);
          lines.push('  These are shown only once; keep them somewhere safe.');
          process.stdout.write(`${lines.join('\n')}\n`);
        }
        await listen(server, config);
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) return;
          stopping = true;
          server.logger.info(`${signal} received, shutting down`);
          const force = setTimeout(() => process.exit(1), 10_000);
          force.unref();
          server.close().then(
            () => process.exit(0),
            () => process.exit(1),
          );
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      },
    );
}
