import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { HANG_MS } from './wait.ts';

/** Whether a process runs (a zombie waiting to be reaped counts as gone). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ..."; comm may hold spaces or parentheses, the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * When a process started (clock ticks since boot, /proc/<pid>/stat field 22), or undefined once it is gone: with its
 * pid, it names one process, where a pid alone may be reused by another once it ended.
 */
export function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The processes descended from `pid` now (its children, theirs …), read from /proc; `pid` itself not included. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid ...": the fields after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      found.push(c);
      walk(c);
    }
  };
  walk(pid);
  return found;
}

/** Polls until `check` holds (every 20 ms); rejects after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = HANG_MS): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A pid a job wrote into a file, once the file holds one. */
export async function pidFrom(file: string): Promise<number> {
  let pid = 0;
  await until(async () => {
    try {
      pid = Number.parseInt(await readFile(file, 'utf8'), 10);
    } catch {
      return false;
    }
    return pid > 0;
  }, `a pid in ${file}`);
  return pid;
}

/**
 * The most processes running at once, from a log the jobs write themselves: one line `start <ns>` when each begins
 * and `end <ns>` when it ends (`date +%s%N`). An end and a start at the same instant count as not overlapping.
 * Also returns how many lines there were.
 */
export function mostAtOnce(log: string): { most: number; lines: number } {
  const events = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' '))
    .map(([kind, ns]) => ({ kind, at: BigInt(ns as string) }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.kind === 'end' ? -1 : 1));
  let running = 0;
  let most = 0;
  for (const e of events) {
    running += e.kind === 'start' ? 1 : -1;
    most = Math.max(most, running);
  }
  return { most, lines: events.length };
}

/** A process noted with its start time, so that a later kill never reaches another process given its pid. */
export interface NotedProcess {
  pid: number;
  started: string;
}

/** The processes descended from `pid` now, noted. */
export function processesOf(pid: number): NotedProcess[] {
  const noted: NotedProcess[] = [];
  for (const p of descendants(pid)) {
    const started = startTime(p);
    if (started !== undefined) noted.push({ pid: p, started });
  }
  return noted;
}

/** SIGKILLs the noted processes still running (the same ones: same start time) and waits until they are gone. */
export async function killAll(noted: readonly NotedProcess[]): Promise<void> {
  const same = (p: NotedProcess) => startTime(p.pid) === p.started;
  for (const p of noted) {
    try {
      if (same(p)) process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await until(() => noted.every((p) => !same(p) || !processRuns(p.pid)), 'the noted processes to end', 30_000);
}
