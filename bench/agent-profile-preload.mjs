// Preloaded with NODE_OPTIONS=--import by `bench/b2-spawn.ts --profile` (node refuses --cpu-prof in NODE_OPTIONS,
// and the server starts its local agent itself): in a `millrace agent` process only, starts the V8 CPU profiler
// and writes `<BENCH_AGENT_PROFILE_DIR>/CPU.agent.<pid>.cpuprofile` when the process exits. Other processes that
// inherit NODE_OPTIONS (the server, the bundler) are left alone.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_AGENT_PROFILE_DIR;
if (dir && process.argv[2] === 'agent') {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  process.once('exit', () => {
    // A session on the process's own thread answers synchronously, so this runs before the process is gone.
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `CPU.agent.${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
