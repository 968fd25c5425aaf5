import type { Command } from 'commander';
import { firstStartLines, writeInitialSecrets } from './initial-secrets.ts';
import { addOptions, typed } from './options.ts';

/** Settings read only from the environment, listed under `serve --help`. */
const ENVIRONMENT = `
Environment only (see README.md):
  MILLRACE_ADMIN_API_KEY, MILLRACE_ADMIN_PASSWORD  the administrator's key and password on the first start
                                                   (default: generated and printed once, or written
                                                   to the file of --initial-secrets)
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
  const cmd = program
    .command('serve')
    .description('start the server (embedded SQLite in the data folder unless --database names PostgreSQL)');
  addOptions(cmd, 'serve')
    .addHelpText('after', ENVIRONMENT)
    .action(async (flags: Record<string, unknown>) => {
      // Loaded here, not at the top: the other commands of the program must not load the whole server.
      const { loadServeConfig } = await import('../config/config.ts');
      const { createServer, listen } = await import('../main.ts');
      const config = await loadServeConfig(flags, process.env, typed(cmd));
      const server = await createServer(config);
      if (server.firstStart) {
        const file = config.initialSecretsFile;
        if (file && (server.firstStart.password || server.firstStart.apiKey)) {
          await writeInitialSecrets(file, server.firstStart).catch((err: unknown) => {
            // The administrator exists already: say how to get a key anyway, rather than print the secrets.
            throw new Error(
              `could not write the first start's secrets to ${file} (${err instanceof Error ? err.message : String(err)}); ` +
                'nothing was printed: `millrace apikey create --user admin` makes a new key',
            );
          });
        }
        process.stdout.write(`${firstStartLines(server.firstStart, file).join('\n')}\n`);
      }
      // A long-lived server compiles every route's schemas before it takes requests (as Fastify does by default), so
      // no request waits for a compilation and a broken schema stops the start; test servers compile on first use.
      try {
        await server.app.ready();
        await server.app.warmSchemas();
        await listen(server, config);
      } catch (err) {
        // Started but not serving (the port is taken, say): stop what createServer started (the engine's timers, the
        // database pool, the local agent), or the process would stay alive after saying it failed.
        await server.close().catch(() => {});
        throw err;
      }
      let stopping = false;
      // Graceful: no new requests, those in flight finish, the engine stops, the database closes, the local agent
      // exits (or, while jobs run, stays to finish them: they report to the next start). Bounded: exit 1 once the
      // grace period is over.
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        server.logger.info(`${signal} received, shutting down`);
        const force = setTimeout(() => {
          server.logger.error(`shutdown took longer than ${config.shutdownGraceMs / 1000} s; exiting anyway`);
          process.exit(1);
        }, config.shutdownGraceMs);
        force.unref();
        server.close({ keepAgent: true }).then(
          () => {
            server.logger.info('stopped');
            process.exit(0);
          },
          (err: unknown) => {
            server.logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      // A renewed certificate is taken on SIGHUP without a restart (docs/architecture.md §10). Only over HTTPS: on
      // plain HTTP, SIGHUP keeps its default (the process ends), as before.
      if (config.tls)
        process.on('SIGHUP', () => {
          try {
            server.reloadTls();
            server.logger.info('SIGHUP received: TLS certificate, key and client CA read again');
          } catch (err) {
            server.logger.error({ err }, 'SIGHUP received: could not read the TLS files again; the current ones stay');
          }
        });
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
}
