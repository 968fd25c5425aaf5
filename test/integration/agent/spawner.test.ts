import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ProcessEnd } from '../../../src/agent/process-end.ts';
import { findInPath } from '../../../src/agent/scripts.ts';
import { jobSpawner, type Spawner } from '../../../src/agent/spawner.ts';
import { agentSuite, killAgent, spawnAgent, startAgent } from '../../helpers/agent-peer.ts';
import { pidFrom, processRuns, until } from '../../helpers/processes.ts';

/** The real programs the spawned processes run (absolute paths, as the agent gives them). */
const program = (name: string): string => {
  const path = findInPath(name);
  assert.ok(path, `${name} is in PATH`);
  return path;
};

/** Does a process of this process group still run. */
const groupRuns = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The pids of the processes whose parent is `parent` and whose command is `name`. */
const childrenNamed = (parent: number, name: string): number[] =>
  readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8')
    .split(' ')
    .filter((p) => p !== '')
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith(name);
      } catch {
        return false;
      }
    });

describe('agent: the Python spawner (spawner.ts)', () => {
  let dir = '';
  let spawner: Spawner;
  let n = 0;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'millrace-spawner-'));
    const found = jobSpawner('python3');
    assert.ok(found, 'a python3 of 3.8 or later is in PATH (CI installs one)');
    spawner = found;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts `argv` in `dir` with `env`; resolves with its pid (if it started), its end and its two files. */
  const run = (argv: string[], env: Record<string, string> = {}, cwd = dir) => {
    const name = `p${++n}`;
    const files = { stdout: join(dir, `${name}.out`), stderr: join(dir, `${name}.err`) };
    const events: string[] = [];
    let pid: number | undefined;
    const ended = new Promise<ProcessEnd>((resolve) => {
      spawner.start(
        { command: argv[0] ?? '', args: argv.slice(1), cwd, ...files, env },
        {
          started: (p) => {
            events.push('started');
            pid = p;
          },
          ended: (end) => {
            events.push('ended');
            resolve(end);
          },
        },
      );
    });
    return { ended, files, events, pid: () => pid, out: () => readFileSync(files.stdout, 'utf8') };
  };

  it('reports the exit code, and the name of the signal that ended a process', async () => {
    const bash = program('bash');
    const runs = [
      run([bash, '-c', 'exit 7']),
      run([bash, '-c', 'true']),
      run([bash, '-c', 'kill -TERM $$']),
      run([bash, '-c', 'ulimit -c 0; kill -ABRT $$']),
    ];
    const ends = await Promise.all(runs.map((r) => r.ended));
    assert.deepEqual(
      ends.map((e) => [e.returnCode, e.signal, e.error]),
      [
        [7, null, undefined],
        [0, null, undefined],
        [null, 'SIGTERM', undefined],
        [null, 'SIGABRT', undefined],
      ],
    );
    assert.deepEqual(runs[0]?.events, ['started', 'ended']);
  });

  it('gives exactly the environment, the folder and the output files asked for, and /dev/null as stdin', async () => {
    const sub = mkdtempSync(join(dir, 'cwd-'));
    const env = run([program('env')], { A: '1', B: 'x=y', EMPTY: '', É: 'ü' }, sub);
    assert.equal((await env.ended).returnCode, 0);
    assert.deepEqual(env.out().split('\n').filter(Boolean).sort(), ['A=1', 'B=x=y', 'EMPTY=', 'É=ü']);
    assert.equal(statSync(env.files.stdout).mode & 0o777, 0o644 & ~process.umask());
    assert.equal(readFileSync(env.files.stderr, 'utf8'), '');
    const where = run([program('bash'), '-c', 'pwd; cat; echo done >&2']);
    assert.equal((await where.ended).returnCode, 0);
    assert.equal(where.out(), `${dir}\n`);
    assert.equal(readFileSync(where.files.stderr, 'utf8'), 'done\n');
  });

  it("starts each process as the leader of a new session, no signal blocked, none ignored but glibc's own", async () => {
    const status = run([program('cat'), '/proc/self/status', '/proc/self/stat']);
    assert.equal((await status.ended).returnCode, 0);
    const text = status.out();
    assert.match(text, /^SigBlk:\s+0+$/m);
    // Ignored: none, but for signals 32 and 33, which glibc keeps for its threads and posix_spawn leaves ignored
    // (spawner.ts); a program that uses them installs its handlers at start.
    const ignored = BigInt(`0x${/^SigIgn:\s+([0-9a-f]+)$/m.exec(text)?.[1] ?? 'ff'}`);
    assert.equal(ignored & ~(0b11n << 31n), 0n);
    // /proc/self/stat: pid (comm) state ppid pgrp session …
    const stat = text.slice(text.lastIndexOf(') ') + 2).split(' ');
    const pid = status.pid();
    assert.equal(Number(stat[2]), pid, 'its own process group');
    assert.equal(Number(stat[3]), pid, 'its own session');
  });

  it('reports a process that cannot start as an error, with no return code', async () => {
    const missing = run([join(dir, 'no-such-program')]);
    const noFolder = run([program('true')], {}, join(dir, 'no-such-folder'));
    for (const end of [await missing.ended, await noFolder.ended]) {
      assert.equal(end.returnCode, null);
      assert.equal(end.signal, null);
    }
    assert.match((await missing.ended).error ?? '', /^cannot start .*no-such-program: No such file or directory$/);
    assert.match((await noFolder.ended).error ?? '', /^cannot enter .*no-such-folder: No such file or directory$/);
  });

  it('follows many processes started at once, each reported once', async () => {
    const truePath = program('true');
    const runs = Array.from({ length: 200 }, () => run([truePath]));
    const ends = await Promise.all(runs.map((r) => r.ended));
    assert.ok(ends.every((e) => e.returnCode === 0));
    assert.ok(runs.every((r) => r.events.join() === 'started,ended'));
    assert.equal(new Set(runs.map((r) => r.pid())).size, 200);
  });

  it('when the spawner is killed: its process groups are killed and their attempts end with an error', async () => {
    const sleeper = run([program('bash'), '-c', 'sleep 60 & wait']);
    await until(() => sleeper.pid() !== undefined, 'the process to start');
    const pid = sleeper.pid() ?? 0;
    const [python] = childrenNamed(process.pid, 'python');
    assert.ok(python, 'the spawner runs as a child of this process');
    process.kill(python, 'SIGKILL');
    const end = await sleeper.ended;
    assert.equal(end.returnCode, null);
    assert.match(end.error ?? '', /process starter ended \(signal SIGKILL\); the job's process group was killed/);
    await until(() => !groupRuns(pid), 'the process group (bash and its sleep) to be gone');
    // The next process gets a new spawner.
    assert.equal((await run([program('true')]).ended).returnCode, 0);
  });
});

describe('agent: what starts the job processes', () => {
  const suite = agentSuite();

  it('is the Python spawner by default; it ends with its agent, the job runs on', async () => {
    const peer = suite.peer();
    const agent = await startAgent(peer, suite.dir());
    peer.run({ jobId: 1, scriptType: 'BASH', script: 'sleep 60' });
    const started = await peer.waitFor((r) => r.message.type === 'started', 'started');
    const pid = started.message.type === 'started' ? started.message.pid : 0;
    const agentPid = agent.child.pid ?? 0;
    const [python] = childrenNamed(agentPid, 'python');
    assert.ok(python, 'the agent has a python child');
    assert.ok(!childrenNamed(agentPid, 'bash').includes(pid), 'the job is not a child of the agent');
    await killAgent(agent);
    await until(() => !processRuns(python), 'the spawner to end once its agent is gone');
    assert.ok(processRuns(pid), 'the job process runs on, as when the agent forked it');
  });

  it('kills a job whose kill came with its run, before the spawner said it started', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir(), { dataDir: join(suite.dir(), 'd') });
    // Both messages arrive together, so the kill is read before the spawner's answer (it is killed either way).
    peer.run({ jobId: 3, scriptType: 'BASH', script: 'sleep 60' });
    peer.send({ type: 'kill', jobId: 3, attempt: 1 });
    const finished = await peer.finished(3);
    assert.equal(finished.killed, true);
    assert.equal(finished.returnCode, null);
    assert.ok(finished.signal === 'SIGTERM' || finished.signal === 'SIGKILL', String(finished.signal));
    const started = peer.messages('started').find((m) => m.type === 'started' && m.jobId === 3);
    assert.ok(started?.type === 'started' && !processRuns(started.pid), 'its process is gone');
  });

  it('is the agent itself with --spawner node, and a wrong name stops the start', async () => {
    const peer = suite.peer();
    const agent = await startAgent(peer, suite.dir(), { args: ['--spawner', 'node'], dataDir: join(suite.dir(), 'b') });
    const pidFile = join(suite.dir(), 'job2.pid');
    // Killed once it runs its script (a TERM while bash forks a command can be lost in bash's child).
    peer.run({
      jobId: 2,
      scriptType: 'BASH',
      script: 'echo $$ > "$PIDFILE"\nsleep 60 &\nwait\n',
      env: { PIDFILE: pidFile },
    });
    const pid = await pidFrom(pidFile);
    const agentPid = agent.child.pid ?? 0;
    assert.deepEqual(childrenNamed(agentPid, 'python'), []);
    assert.ok(childrenNamed(agentPid, 'bash').includes(pid), 'the job is a child of the agent');
    peer.send({ type: 'kill', jobId: 2, attempt: 1 });
    const finished = await peer.finished(2);
    assert.equal(finished.signal, 'SIGTERM');

    // A wrong name: the agent exits at once, saying what it accepts.
    const wrong = spawnAgent(peer, suite.dir(), { args: ['--spawner', 'perl'], dataDir: join(suite.dir(), 'c') });
    const { code } = await wrong.exited;
    assert.notEqual(code, 0);
    assert.match(wrong.output(), /--spawner is python3 or node, not "perl"/);
  });
});
