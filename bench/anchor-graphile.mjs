// The graphile-worker anchor of the B1 benchmark: a worker with default settings and one no-op task.
//
//   node bench/anchor-graphile.mjs <connection-string> [concurrency]
//
// It runs graphile-worker's migrations, starts `run()` with `concurrency` (default 10) and no other setting
// changed (so completions are not batched and there is no local queue), and prints `{"ready":true}` once the
// worker listens. The harness adds the jobs (`addJobs` in 1000s) and watches the jobs table drain. On SIGTERM it
// stops gracefully and prints `{"ran":N}`, the number of task runs. Only warnings and errors are logged: the
// default logger writes a line per completed job, which is not what graphile-worker costs.
// Plain JavaScript on purpose, like the other anchors: no loader (tsx).
import { Logger, run } from 'graphile-worker';

const [connectionString, concurrencyText = '10'] = process.argv.slice(2);
if (!connectionString) {
  process.stderr.write('usage: node bench/anchor-graphile.mjs <connection-string> [concurrency]\n');
  process.exit(64);
}

const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

let ran = 0;
const runner = await run({
  connectionString,
  concurrency: Number(concurrencyText),
  noHandleSignals: true,
  logger,
  taskList: {
    noop: async () => {
      ran++;
    },
  },
});
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  runner.stop().then(
    () => {
      process.stdout.write(`${JSON.stringify({ ran })}\n`);
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`graphile-worker stop failed: ${err}\n`);
      process.exit(1);
    },
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
