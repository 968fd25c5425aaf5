/**
 * The agent's job processes, started by a small Python process with posix_spawn instead of forked by the agent.
 *
 * Why: a fork copies the page tables of the process that forks; the parent then takes a copy-on-write fault at its
 * next write to each page, and the child's exec tears the copy down again. The agent is a Node process with tens of
 * MiB of heap, so each job paid most of a millisecond of CPU for that (bench/README.md, B2). posix_spawn starts the
 * child in the parent's memory (vfork) without copying anything, but Node offers only fork, and Perl or a helper
 * written in Node fork as well. Python's `os.posix_spawn` (3.8 and later) is glibc's, with the file actions, new
 * session and signal settings a job needs. Where the agent finds no such `python3` in its PATH, it forks job
 * processes itself, as before (runner.ts).
 *
 * The protocol on the spawner's stdin and stdout. The agent sends one frame per process: its length in bytes and a
 * newline, then NUL-separated fields: id, working folder, stdout file, stderr file, the argument count, the
 * arguments (the first is the program's absolute path), then `NAME=value` environment entries. No field can hold a
 * NUL: they are C strings for the kernel. The spawner answers one line per event:
 *   `S id pid`         started; the process leads a new session and process group;
 *   `F id message`     it could not start (no such folder, a file it cannot create, exec failed), then `X id 127 0`;
 *   `X id code signal` reaped: the exit code, or the number of the signal that ended it (0 when none).
 * The process gets the two files (created or truncated, mode 0644), /dev/null as stdin, exactly the given
 * environment, no blocked signal and every signal's default action, and runs the program without a shell. The one
 * difference from a fork by Node: signals 32 and 33, which glibc keeps for its threads, stay ignored (glibc's
 * posix_spawn sets them so, and cannot be asked otherwise); glibc and musl install their own handlers for them in
 * every program that uses threads.
 *
 * When the agent ends, the spawner reads end-of-file and exits; the job processes run on, as they did when the agent
 * forked them (the next agent reports them lost). When the spawner ends while the agent runs, nothing can tell how
 * its processes end: each process group it started is killed and the attempt ends with an error; the next job starts
 * a new spawner.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { Socket } from 'node:net';
import type { ProcessEnd } from './process-end.ts';
import { findInPath } from './scripts.ts';

/** One process to start. */
export interface SpawnRequest {
  command: string;
  args: readonly string[];
  cwd: string;
  stdout: string;
  stderr: string;
  env: Readonly<Record<string, string | undefined>>;
}

export interface SpawnHandlers {
  /** The process exists (its pid leads its process group). */
  started(pid: number): void;
  /** It ended, or never started (`error`). Called once. */
  ended(end: ProcessEnd): void;
}

/** Python 3.8 or later: a SIGCHLD writes to the wake-up pipe, so `select` never sleeps through a child's end. */
const SPAWNER_SCRIPT = String.raw`
import os, select, signal, sys
if not hasattr(os, 'posix_spawn') or sys.version_info < (3, 8):
    sys.exit(3)
kids = {}
create = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
defaults = signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}
wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False)
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *_: None)
def say(text):
    data = text.encode()
    try:
        while data:
            data = data[os.write(1, data):]
    except BrokenPipeError:
        sys.exit(0)
def reap():
    while kids:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        job = kids.pop(pid, None)
        if job is not None:
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
            say(f'X {job} {code} {sig}\n')
def start(frame):
    fields = frame.split(b'\0')
    job, cwd, out, err, argc = fields[0].decode(), fields[1], fields[2], fields[3], int(fields[4])
    argv = fields[5:5 + argc]
    env = dict(e.split(b'=', 1) for e in fields[5 + argc:])
    actions = [(os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, out, create, 0o644),
               (os.POSIX_SPAWN_OPEN, 2, err, create, 0o644)]
    try:
        os.chdir(cwd)
    except OSError as e:
        say(f'F {job} cannot enter {os.fsdecode(cwd)}: {e.strerror}\nX {job} 127 0\n')
        return
    try:
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True, setsigmask=(), setsigdef=defaults)
    except OSError as e:
        say(f'F {job} cannot start {os.fsdecode(argv[0])}: {e.strerror}\nX {job} 127 0\n')
        return
    kids[pid] = job
    say(f'S {job} {pid}\n')
buf = b''
while True:
    reap()
    try:
        ready, _, _ = select.select([0, wake_r], [], [])
    except InterruptedError:
        continue
    if wake_r in ready:
        try:
            os.read(wake_r, 4096)
        except BlockingIOError:
            pass
    if 0 not in ready:
        continue
    chunk = os.read(0, 65536)
    if not chunk:
        sys.exit(0)
    buf += chunk
    while True:
        head = buf.find(b'\n')
        if head < 0 or len(buf) < head + 1 + int(buf[:head]):
            break
        end = head + 1 + int(buf[:head])
        start(buf[head + 1:end])
        buf = buf[end:]
`;

/** Signal numbers to names; of two names for one number (SIGABRT and SIGIOT) the first, which Node reports too. */
const SIGNAL_NAMES = new Map<number, string>();
for (const [name, n] of Object.entries(constants.signals)) if (!SIGNAL_NAMES.has(n)) SIGNAL_NAMES.set(n, name);

interface Pending {
  handlers: SpawnHandlers;
  pid?: number;
  error?: string;
}

/** One spawner process, started on first use and again after it ended. */
export class Spawner {
  private readonly python: string;
  private proc: ChildProcess | undefined;
  /** The spawner's stdout: its answers. */
  private answers: Socket | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private partial = '';
  private checked: boolean | undefined;

  constructor(python: string) {
    this.python = python;
  }

  /** Whether this Python can be the spawner (3.8 or later), asked once; when not, the agent forks job processes. */
  usable(): boolean {
    this.checked ??=
      spawnSync(this.python, ['-I', '-S', '-c', SPAWNER_CHECK], { stdio: 'ignore', env: {}, timeout: 10_000 })
        .status === 0;
    return this.checked;
  }

  /** Sends the request; `handlers` hear of the start and the end (the end also when the spawner goes away). */
  start(request: SpawnRequest, handlers: SpawnHandlers): void {
    const stdin = this.process().stdin;
    const id = this.nextId++;
    this.pending.set(id, { handlers });
    this.hold();
    const env = Object.entries(request.env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
    const fields = [id, request.cwd, request.stdout, request.stderr, request.args.length + 1];
    const frame = Buffer.from([...fields, request.command, ...request.args, ...env].join('\0'));
    stdin?.write(`${frame.length}\n`);
    stdin?.write(frame);
  }

  /**
   * The agent stops: the spawner reads end-of-file and exits, its processes run on (as when the agent ends) and are
   * not followed any more.
   */
  close(): void {
    const proc = this.proc;
    this.proc = undefined;
    this.pending.clear();
    proc?.stdin?.end();
    proc?.unref();
    this.answers?.unref();
    this.answers = undefined;
  }

  private process(): ChildProcess {
    if (this.proc) return this.proc;
    // Isolated (-I: no PYTHON* variables, no user site) and without `site` (-S): nothing of the machine's Python
    // setup changes what it runs.
    const proc = spawn(this.python, ['-I', '-S', '-c', SPAWNER_SCRIPT], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: {},
    });
    // A pipe of a child process is a net.Socket, which can be unref'd (the types say Readable).
    const answers = proc.stdout;
    if (!(answers instanceof Socket)) {
      proc.kill();
      throw new Error('the spawner has no stdout pipe');
    }
    this.proc = proc;
    this.answers = answers;
    answers.setEncoding('utf8');
    answers.on('data', (chunk: string) => this.read(chunk));
    proc.stdin?.on('error', () => {
      // the spawner is gone: its exit event ends what it held
    });
    proc.once('error', (err) => this.gone(proc, err.message));
    proc.once('exit', (code, signal) => this.gone(proc, signal ? `signal ${signal}` : `exit code ${code}`));
    return proc;
  }

  private read(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      const [kind, idText, ...rest] = line.split(' ');
      const id = Number(idText);
      const p = this.pending.get(id);
      if (!p) continue;
      if (kind === 'S') {
        p.pid = Number(rest[0]);
        p.handlers.started(p.pid);
      } else if (kind === 'F') {
        p.error = rest.join(' ');
      } else if (kind === 'X') {
        this.pending.delete(id);
        this.release();
        const signal = Number(rest[1]);
        p.handlers.ended(
          p.error !== undefined
            ? { endTime: Date.now(), returnCode: null, signal: null, error: p.error }
            : signal > 0
              ? { endTime: Date.now(), returnCode: null, signal: SIGNAL_NAMES.get(signal) ?? `signal ${signal}` }
              : { endTime: Date.now(), returnCode: Number(rest[0]), signal: null },
        );
      }
    }
  }

  /** The spawner ended: its processes can no longer be followed, so their groups are killed and their attempts end. */
  private gone(proc: ChildProcess, how: string): void {
    if (this.proc !== proc) return;
    this.proc = undefined;
    this.answers = undefined;
    this.partial = '';
    const held = [...this.pending.values()];
    this.pending.clear();
    for (const p of held) {
      if (p.pid !== undefined) {
        try {
          process.kill(-p.pid, 'SIGKILL');
        } catch {
          // the group is gone
        }
      }
      const error =
        p.pid === undefined
          ? `the agent's process starter ended (${how}) before the process started`
          : `the agent's process starter ended (${how}); the job's process group was killed, its outcome is unknown`;
      p.handlers.ended({ endTime: Date.now(), returnCode: null, signal: null, error });
    }
  }

  /** While processes are pending, the pipe from the spawner keeps the agent alive, as a child process would. */
  private hold(): void {
    this.answers?.ref();
    this.proc?.ref();
  }

  private release(): void {
    if (this.pending.size > 0) return;
    this.answers?.unref();
    this.proc?.unref();
  }
}

/**
 * The spawner the agent's option asks for: `node` none (the agent forks), `python3` the Python spawner (an error
 * when there is no `python3` of 3.8 or later in PATH), unset the Python spawner when there is a `python3` in PATH
 * (whether it is recent enough is checked at the first job: `usable`).
 */
export function jobSpawner(choice: 'python3' | 'node' | undefined): Spawner | undefined {
  if (choice === 'node') return undefined;
  const python = findInPath('python3');
  const spawner = python === undefined ? undefined : new Spawner(python);
  if (choice === 'python3' && !spawner?.usable())
    throw new Error('--spawner python3: there is no python3 of version 3.8 or later in PATH');
  return spawner;
}

/** Exits 0 where the spawner can run. */
const SPAWNER_CHECK = "import os, sys; sys.exit(0 if hasattr(os, 'posix_spawn') and sys.version_info >= (3, 8) else 1)";
