import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { createServer, listen } from '../main.ts';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('start the server (embedded SQLite in the data folder unless --database names PostgreSQL)')
    .option('--data <dir>', 'data folder', undefined)
    .option('--port <n>', 'TCP port (default 7070)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--context <path>', 'context path, may be empty or hold / (default millrace)')
    .option('--database <url>', 'postgres:// URL to use PostgreSQL instead of SQLite')
    .option('--vendor <name>', 'vendor segment of the JSON interface path and header prefix (default Vendor)')
    .action(
      async (flags: {
        data?: string;
        port?: string;
        host?: string;
        context?: string;
        database?: string;
        vendor?: string;
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
