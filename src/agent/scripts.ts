import { accessSync, closeSync, constants, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { rm, rmdir, unlink } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { emptyRecord } from '../domain/own.ts';
import type { RequestType, ScriptType } from './protocol.ts';
import { itemAt } from '../domain/item-at.ts';
import type { ScriptFiles } from './script-files.ts';

/**
 * How each script type is launched. The script text goes into a file in the work folder and parameters reach it
 * only as environment variables: nothing the server sends is ever pasted into a command line or into shell text.
 */

/** The files of one attempt, in `<data>/work/<jobId>.<attempt>/`. */
export interface WorkPaths {
  dir: string;
  /** `$MILLRACE_FILES`: every plain file the script leaves here becomes a job file. */
  files: string;
  /** `$MILLRACE_OUT`: `NAME=value` lines setting Out parameters; created by the script when it writes one. */
  out: string;
  /** BASH only: NUL-separated name/value pairs of the Out variables set when the script ended. */
  outVars: string;
  stdout: string;
  stderr: string;
}

export function workPaths(workRoot: string, jobId: number, attempt: number): WorkPaths {
  const dir = join(workRoot, `${jobId}.${attempt}`);
  return {
    dir,
    files: join(dir, 'files'),
    out: join(dir, 'out'),
    outVars: join(dir, 'out-vars'),
    stdout: join(dir, 'stdout.log'),
    stderr: join(dir, 'stderr.log'),
  };
}

/**
 * Deletes an attempt's work folder. The usual folder (the two logs and an empty `files/`) goes in four steps; any
 * other (job files, Out files, a script, something a job left) through the recursive removal, which first looks at
 * every entry: twice the file system calls, for every job.
 */
export async function removeWorkFolder(paths: WorkPaths): Promise<void> {
  try {
    await unlink(paths.stdout);
    await unlink(paths.stderr);
    await rmdir(paths.files);
    await rmdir(paths.dir);
  } catch {
    await rm(paths.dir, { recursive: true, force: true });
  }
}

/** What to spawn: the program, its arguments, and environment variables the launch itself needs. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** A name that can be a shell variable: the only Out names a BASH script can set (and safe in `${!name}`). */
export const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The constant text BASH runs: it copies its settings into shell variables, removes them from the environment
 * (the job sees only the documented MILLRACE_ variables), sources the script, and on exit writes the Out
 * variables that are set as NUL-separated pairs (values may hold newlines); a job without Out parameters writes no
 * such file (each file created costs the agent's machine, see bench/README.md B2). `exit` in the trap keeps the script's
 * status; a script killed by a signal still ends by that signal (bash re-raises it after the trap).
 */
export const BASH_WRAPPER = `__millrace_script=$MILLRACE_SCRIPT __millrace_names=$MILLRACE_OUT_NAMES __millrace_vars=$MILLRACE_OUT_VARS
unset MILLRACE_SCRIPT MILLRACE_OUT_NAMES MILLRACE_OUT_VARS
__millrace_exit() {
  local __millrace_rc=$? __millrace_n IFS=$' \\t\\n'
  set +eu
  if [[ -n $__millrace_names ]]; then
    for __millrace_n in $__millrace_names; do
      if [[ -n \${!__millrace_n+x} ]]; then builtin printf '%s\\0%s\\0' "$__millrace_n" "\${!__millrace_n}"; fi
    done >| "$__millrace_vars"
  fi
  exit "$__millrace_rc"
}
trap __millrace_exit EXIT
. "$__millrace_script"
`;

const SCRIPT_EXTENSION = { BASH: 'bash', SH: 'sh' } as const;

const SCRIPT_FILE: Record<ScriptType, string> = {
  BASH: 'script.bash',
  SH: 'script.sh',
  PYTHON: 'script.py',
  NODE: 'script.js',
};

/**
 * Finds or writes the script file and returns how to launch it. Throws when the interpreter is not found (the
 * caller reports the attempt finished with that error). BASH and SH run a file shared by every attempt with the
 * same text (script-files.ts); PYTHON and NODE get theirs in the work folder, since the folder of the script is
 * where their imports are looked up, and a job may write modules into its working folder.
 */
export function prepareLaunch(
  scriptType: ScriptType,
  script: string,
  outNames: string[],
  paths: WorkPaths,
  shared: ScriptFiles,
): Launch {
  const file =
    scriptType === 'BASH' || scriptType === 'SH'
      ? shared.fileFor(script, SCRIPT_EXTENSION[scriptType])
      : join(paths.dir, SCRIPT_FILE[scriptType]);
  if (scriptType === 'PYTHON' || scriptType === 'NODE') writeFileSync(file, script, { mode: 0o600 });
  switch (scriptType) {
    case 'BASH':
      return {
        command: interpreter('bash'),
        args: ['-c', BASH_WRAPPER, file],
        env: {
          MILLRACE_SCRIPT: file,
          MILLRACE_OUT_NAMES: outNames.filter((n) => SHELL_NAME.test(n)).join(' '),
          MILLRACE_OUT_VARS: paths.outVars,
        },
      };
    case 'SH':
      return { command: interpreter('sh'), args: [file], env: {} };
    case 'PYTHON':
      return { command: interpreter('python3'), args: [file], env: {} };
    case 'NODE':
      // A package.json without "type" stops node's search for one above the work folder, so a script is
      // CommonJS or (when it uses import/export) an ES module wherever the data folder lives.
      writeFileSync(join(paths.dir, 'package.json'), '{}\n');
      return {
        command: process.execPath,
        args: ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', file],
        env: {},
      };
  }
}

const found = new Map<string, string>();

/** The interpreter's path, looked up in the agent's own PATH (a job parameter named PATH cannot redirect it). */
function interpreter(name: string): string {
  const path = findInPath(name);
  if (path === undefined) throw new Error(`${name} not found in PATH`);
  return path;
}

/** A program's path in the agent's own PATH, found once; undefined when it is not there. */
export function findInPath(name: string): string | undefined {
  const known = found.get(name);
  if (known) return known;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      found.set(name, candidate);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Out parameter text read from files is capped (the report must fit in one protocol line). */
const OUT_FILE_LIMIT = 512 * 1024;

/**
 * The Out values the script set: for BASH the variables set at exit, then for every type the `NAME=value` lines
 * of `$MILLRACE_OUT` (the first `=` splits, later lines win, and a line wins over a variable). Only `outNames`.
 */
export function collectOut(
  scriptType: ScriptType | RequestType,
  outNames: string[],
  paths: WorkPaths,
): Record<string, string> {
  const wanted = new Set(outNames);
  const out = emptyRecord<string>();
  // Nothing is wanted: the files are not even looked for (two failed opens per job otherwise).
  if (wanted.size === 0) return out;
  if (scriptType === 'BASH') {
    const parts = readCapped(paths.outVars).split('\0');
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const name = itemAt(parts, i);
      if (wanted.has(name)) out[name] = itemAt(parts, i + 1);
    }
  }
  for (const line of readCapped(paths.out).split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const name = line.slice(0, eq);
    if (wanted.has(name)) out[name] = line.slice(eq + 1);
  }
  return out;
}

function readCapped(path: string): string {
  let fd: number;
  try {
    // Non-blocking and no symlinks: the script may have replaced the file by a FIFO or a link.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return '';
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size === 0) return '';
    // Sized by the file (most are empty or tiny): a fixed large buffer per read made every job allocate memory
    // outside the heap, which swelled the agent's RSS, and every spawn forks the agent. A file still growing is read
    // up to its size now, as the job file sizes are.
    const buf = Buffer.allocUnsafe(Math.min(st.size, OUT_FILE_LIMIT));
    let length = 0;
    while (length < buf.length) {
      const n = readSync(fd, buf, length, buf.length - length, length);
      if (n === 0) break;
      length += n;
    }
    return buf.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
