import type { Command } from 'commander';
import { clientCommand, collect, contextOf, type ClientFlags, type Ctx } from './context.ts';
import { seg } from './http.ts';
import { printObject, write } from './output.ts';

/**
 * `millrace job mark-completed|mark-error <id> -m <comment>` (the markcompleted and markerror actions) and
 * `millrace job modify <id> …` (PATCH /Job/<id>): a failed run set right by hand, a job changed before it starts
 * (docs/architecture.md §6).
 */

interface MarkFlags extends ClientFlags {
  message: string;
}

interface ModifyFlags extends ClientFlags {
  queue?: string;
  start?: string;
  priority?: string;
  description?: string;
  param: string[];
}

export function registerJobChangeCommands(job: Command): void {
  for (const [verb, action, status] of [
    ['mark-completed', 'markcompleted', 'Completed'],
    ['mark-error', 'markerror', 'Error'],
  ] as const)
    clientCommand(job, verb, `set a finished job ${status} by hand, saying why (kept in its history)`)
      .argument('<id>', 'job id')
      .requiredOption('-m, --message <comment>', 'why the status is set by hand')
      .action((id: string, flags: MarkFlags) => mark(contextOf(flags), id, action, flags.message));
  clientCommand(job, 'modify', 'change a job that has not started: its queue, start, priority, description, values')
    .argument('<id>', 'job id')
    .option('--queue <queue>', 'the queue it runs in')
    .option('--start <time>', 'requested start time, "YYYY/MM/DD HH:MM:SS <zone>" or ISO-8601')
    .option('--priority <n>', 'its priority, 1–100')
    .option('--description <text>', 'its description')
    .option('-p, --param <NAME=VALUE>', 'an In parameter value (repeatable)', collect, [])
    .action((id: string, flags: ModifyFlags) => modify(contextOf(flags), id, flags));
}

async function mark(ctx: Ctx, id: string, action: string, comment: string): Promise<void> {
  const job = await ctx.client.json('PUT', `/Job/${seg(id)}/${action}`, { Comment: comment });
  if (ctx.format === 'table') write(`Job ${job.jobId}: ${job.Status}`);
  else printObject(job, ctx.format);
}

async function modify(ctx: Ctx, id: string, flags: ModifyFlags): Promise<void> {
  const body: Record<string, unknown> = {};
  if (flags.queue !== undefined) body.Queue = flags.queue;
  if (flags.start !== undefined) body.RequestedStartTime = flags.start;
  // A whole number goes as a number; anything else as given, for the server to refuse naming the field.
  if (flags.priority !== undefined)
    body.Priority = /^\d{1,9}$/.test(flags.priority) ? Number(flags.priority) : flags.priority;
  if (flags.description !== undefined) body.Description = flags.description;
  if (flags.param.length > 0)
    body.JobParameters = flags.param.map((p) => {
      const eq = p.indexOf('=');
      if (eq <= 0) throw new Error(`-p ${p}: write NAME=VALUE`);
      return { Name: p.slice(0, eq), InValueString: p.slice(eq + 1) };
    });
  if (Object.keys(body).length === 0)
    throw new Error('say what to change: --queue, --start, --priority, --description or -p NAME=VALUE');
  const job = await ctx.client.json('PATCH', `/Job/${seg(id)}`, body);
  if (ctx.format !== 'table') return printObject(job, ctx.format);
  write(
    `Job ${job.jobId}: ${job.Status}, queue ${job.Queue}, start ${job.RequestedStartTime}, priority ${job.Priority}`,
  );
}
