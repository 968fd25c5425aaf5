import { once } from 'node:events';
import type { Command } from 'commander';
import { JOB_ACTIONS, type JobAction, jobAction } from '../../domain/job-actions.ts';
import { FINAL, isJobStatus } from '../../domain/job-status.ts';
import { clientCommand, collect, contextOf, type ClientFlags, type Ctx, reportFailure, sleep } from './context.ts';
import { type ApiClient, type Json, seg } from './http.ts';
import { registerJobChangeCommands } from './job-change-commands.ts';
import {
  type Column,
  paint,
  printJson,
  printList,
  printObject,
  statusColour,
  table,
  useColour,
  write,
} from './output.ts';

/** `millrace job …`: submit (and follow), list, show, logs (and follow), why a job waits, and act on jobs. */

const isFinal = (status: unknown): boolean => isJobStatus(status) && FINAL.includes(status);

export const JOB_COLUMNS: Column[] = [
  { header: 'ID', value: (j) => j.jobId },
  { header: 'DEFINITION', value: (j) => j.JobDefinition },
  { header: 'STATUS', value: (j) => j.Status, colour: (j) => statusColour(j.Status) },
  { header: 'QUEUE', value: (j) => j.Queue },
  { header: 'START', value: (j) => j.RunStart ?? j.ScheduledStartTime ?? j.RequestedStartTime },
  { header: 'END', value: (j) => j.RunEnd },
  { header: 'RC', value: (j) => j.ReturnCode },
];

/**
 * The exit status for a finished job: 0 for Completed, else its return code where it has one that an exit status
 * can carry (1–255), else 1 — never 0 for a job that did not complete.
 */
export function exitCodeOf(job: Json): number {
  if (job.Status === 'Completed') return 0;
  const rc = job.ReturnCode;
  if (typeof rc === 'number' && Number.isInteger(rc) && rc >= 1 && rc <= 255) return rc;
  return 1;
}

/** The verbs of `millrace job` that act on jobs: the action table marks them. */
export const JOB_VERBS = JOB_ACTIONS.filter((a) => jobAction(a).verb === true);

interface SubmitFlags extends ClientFlags {
  param: string[];
  queue?: string;
  at?: string;
  maxRunTime?: string;
  wait?: boolean;
}

interface ListFlags extends ClientFlags {
  status?: string;
  definition?: string;
  queue?: string;
  limit: string;
  watch?: boolean;
}

interface LogFlags extends ClientFlags {
  follow?: boolean;
  stderr?: boolean;
}

export function registerJobCommands(program: Command): void {
  const job = program.command('job').description('submit, follow, list and control jobs on a server');
  clientCommand(job, 'submit', 'submit a job of a definition')
    .argument('<definition>', 'definition <partition>.<name> (a bare name means GLOBAL)')
    .option('-p, --param <NAME=VALUE>', 'a parameter value (repeatable)', collect, [])
    .option('--queue <queue>', 'queue to run in instead of the definition’s default')
    .option('--at <time>', 'requested start time, "YYYY/MM/DD HH:MM:SS <zone>" or ISO-8601')
    .option('--max-run-time <seconds>', 'kill the job if it still runs after this (instead of the definition’s limit)')
    .option('--wait', 'follow the job to its final status; exit 0 only for Completed')
    .action((definition: string, flags: SubmitFlags) => submit(contextOf(flags), definition, flags));
  clientCommand(job, 'list', 'list jobs, newest first')
    .option('--status <status>', 'only jobs in this status')
    .option('--definition <definition>', 'only jobs of this definition')
    .option('--queue <queue>', 'only jobs of this queue')
    .option('--limit <n>', 'at most this many jobs', '50')
    .option('--watch', 'list again every two seconds until interrupted')
    .action((flags: ListFlags) => listJobs(contextOf(flags), flags));
  clientCommand(job, 'show', 'show a job')
    .argument('<id>', 'job id')
    .action(async (id: string, flags: ClientFlags) => {
      const ctx = contextOf(flags);
      printObject(await ctx.client.get(`/Job/${seg(id)}`), ctx.format);
    });
  clientCommand(job, 'logs', 'print a job’s output (stdout.log, or stderr.log with --stderr)')
    .argument('<id>', 'job id')
    .option('-f, --follow', 'keep printing as the job writes, until it is final')
    .option('--stderr', 'stderr.log instead of stdout.log')
    .action((id: string, flags: LogFlags) => logs(contextOf(flags).client, id, flags));
  clientCommand(job, 'why', 'say why a job waits: each check it fails now, one line each')
    .argument('<id>', 'job id')
    .action((id: string, flags: ClientFlags) => why(contextOf(flags), id));
  for (const action of JOB_VERBS)
    clientCommand(job, action, `${action} jobs`)
      .argument('<id...>', 'job ids')
      .action((ids: string[], flags: ClientFlags) => act(contextOf(flags), action, ids));
  registerJobChangeCommands(job);
}

function parameters(given: string[]): Array<{ Name: string; InValueString: string }> {
  return given.map((p) => {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`-p ${p}: write NAME=VALUE`);
    return { Name: p.slice(0, eq), InValueString: p.slice(eq + 1) };
  });
}

async function submit(ctx: Ctx, definition: string, flags: SubmitFlags): Promise<void> {
  const body: Record<string, unknown> = {};
  if (flags.param.length > 0) body.JobParameters = parameters(flags.param);
  if (flags.queue !== undefined) body.Queue = flags.queue;
  if (flags.at !== undefined) body.RequestedStartTime = flags.at;
  // Whole seconds go as a number; anything else as given, for the server to refuse naming the field.
  if (flags.maxRunTime !== undefined)
    body.MaxRunTime = /^\d{1,9}$/.test(flags.maxRunTime) ? Number(flags.maxRunTime) : flags.maxRunTime;
  const job = await ctx.client.json('POST', `/Job/${seg(definition)}`, body);
  if (!flags.wait) {
    if (ctx.format === 'table') write(`Job ${job.jobId} submitted (${job.JobDefinition}, ${job.Status})`);
    else printObject(job, ctx.format);
    return;
  }
  const final = await follow(ctx.client, job.jobId);
  if (ctx.format === 'table') {
    const rc = final.ReturnCode === null || final.ReturnCode === undefined ? '' : `, return code ${final.ReturnCode}`;
    const status = paint(final.Status, statusColour(final.Status), useColour());
    write(`Job ${final.jobId} ${status}${rc}`);
  } else printObject(final, ctx.format);
  process.exitCode = exitCodeOf(final);
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const elapsed = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** Polls the job until it is final; on a terminal a spinner on stderr shows its status and the time waited. */
async function follow(client: ApiClient, jobId: number): Promise<Json> {
  const started = Date.now();
  const tty = process.stderr.isTTY === true;
  let status = '';
  let frame = 0;
  const draw = () => {
    frame = (frame + 1) % SPINNER.length;
    process.stderr.write(`\r\x1b[2K${SPINNER[frame]} Job ${jobId} ${status} ${elapsed(Date.now() - started)}`);
  };
  const spinner = tty ? setInterval(draw, 100) : undefined;
  try {
    for (let delay = 200; ; delay = Math.min(1000, delay * 2)) {
      const job = await client.get(`/Job/${jobId}`);
      status = job.Status;
      if (isFinal(job.Status)) return job;
      await sleep(delay);
    }
  } finally {
    if (spinner) {
      clearInterval(spinner);
      process.stderr.write('\r\x1b[2K');
    }
  }
}

async function listJobs(ctx: Ctx, flags: ListFlags): Promise<void> {
  const limit = Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`--limit ${flags.limit}: give a positive whole number`);
  const query = { Status: flags.status, JobDefinition: flags.definition, Queue: flags.queue };
  const fetchJobs = () => ctx.client.listAll('/Job', query, limit);
  if (!flags.watch) return printList(await fetchJobs(), JOB_COLUMNS, ctx.format);
  const tty = process.stdout.isTTY === true;
  for (;;) {
    const jobs = await fetchJobs();
    if (ctx.format === 'json') write(JSON.stringify(jobs));
    else if (tty) {
      process.stdout.write('\x1b[H\x1b[2J');
      write(`Every 2s: millrace job list   ${new Date().toISOString()}\n`);
      write(jobs.length === 0 ? '(none)' : table(jobs, JOB_COLUMNS, useColour()).join('\n'));
    } else {
      printList(jobs, JOB_COLUMNS, ctx.format);
      write('');
    }
    await sleep(2000);
  }
}

/**
 * Prints a job file, and with --follow keeps printing what the job adds (`Range: bytes=<offset>-`) until the job is
 * final. The job's status is read before each read of the file, so once a final status was seen, the read that
 * follows gets the file's last bytes.
 */
async function logs(client: ApiClient, id: string, flags: LogFlags): Promise<void> {
  const name = flags.stderr ? 'stderr.log' : 'stdout.log';
  let offset = 0;
  for (let delay = 200; ; delay = Math.min(1000, delay * 2)) {
    const job = await client.get(`/Job/${seg(id)}`);
    const file = (job.JobFiles ?? []).find((f: Json) => f.Name === name);
    if (file) {
      const read = await readFrom(client, file.uniqueId, offset);
      offset += read;
      if (read > 0) delay = 100;
    }
    if (!flags.follow || isFinal(job.Status)) {
      if (!file && !flags.follow) throw new Error(`Job ${id} has no ${name} (yet): it is ${job.Status}`);
      return;
    }
    await sleep(delay);
  }
}

/** Streams the bytes of a job file from `offset` to standard output; answers how many were written. */
async function readFrom(client: ApiClient, fileId: number, offset: number): Promise<number> {
  const path = `/JobFile/${fileId}/content`;
  const res = await client.send('GET', path, { headers: { Range: `bytes=${offset}-` } });
  if (res.status === 416) {
    await res.body?.cancel();
    return 0;
  }
  if (!res.ok) throw await client.failure('GET', path, res);
  // A 200 is the whole file (a server that ignored the range): skip what was printed already.
  let skip = res.status === 200 ? offset : 0;
  let written = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    let bytes = chunk;
    if (skip > 0) {
      const dropped = Math.min(skip, bytes.length);
      bytes = bytes.subarray(dropped);
      skip -= dropped;
    }
    if (bytes.length === 0) continue;
    written += bytes.length;
    if (!process.stdout.write(bytes)) await once(process.stdout, 'drain');
  }
  return written;
}

/** `job why`: the reasons of GET /Job/<id>/waiting, a line each (`-o json`: the answer as it came). */
async function why(ctx: Ctx, id: string): Promise<void> {
  const answer = await ctx.client.get(`/Job/${seg(id)}/waiting`);
  if (ctx.format !== 'table') return printObject(answer, ctx.format);
  const reasons: Json[] = answer.Reasons ?? [];
  if (reasons.length === 0) write(`Job ${id} is ${answer.Status} and waits for nothing.`);
  for (const r of reasons) write(r.Message);
}

async function act(ctx: Ctx, action: JobAction, ids: string[]): Promise<void> {
  const results: Json[] = [];
  for (const id of ids) {
    try {
      const job = await ctx.client.json('PUT', `/Job/${seg(id)}/${action}`);
      results.push(job);
      if (ctx.format !== 'table') continue;
      const same = String(job.jobId) === id;
      write(same ? `Job ${id}: ${job.Status}` : `Job ${id}: ${action} → Job ${job.jobId} (${job.Status})`);
    } catch (err) {
      reportFailure(err);
    }
  }
  if (ctx.format === 'json') printJson(results);
  else if (ctx.format === 'yaml') printObject(results, 'yaml');
}
