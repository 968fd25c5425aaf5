import type { Command } from 'commander';
import { JOB_ACTIONS } from '../../domain/job-actions.ts';
import { clientCommand, type ClientFlags, contextOf, type Ctx } from './context.ts';
import { type Json, seg } from './http.ts';
import { printObject, write } from './output.ts';

/**
 * `millrace job bulk <action>`: one action on the jobs a filter matches (the filters of `job list` and more) or on
 * the ids given, through `POST /Job/bulk/<action>` (docs/architecture.md §6). The server judges each job alone; the
 * command prints what was done and each job skipped with its reason, and exits 1 when a job was skipped (not on a
 * dry run, which changes nothing).
 */

interface BulkFlags extends ClientFlags {
  status?: string;
  definition?: string;
  queue?: string;
  processServer?: string;
  partition?: string;
  search?: string;
  since?: string;
  until?: string;
  parentJob?: string;
  ids?: string;
  comment?: string;
  dryRun?: boolean;
}

/** The command's options and the Filter names of GET /Job they give. */
const FILTERS: Array<[keyof BulkFlags, string, string]> = [
  ['status', 'Status', '--status <statuses>'],
  ['definition', 'JobDefinition', '--definition <definition>'],
  ['queue', 'Queue', '--queue <queue>'],
  ['processServer', 'ProcessServer', '--process-server <server>'],
  ['partition', 'Partition', '--partition <partition>'],
  ['search', 'Search', '--search <text>'],
  ['since', 'Since', '--since <time>'],
  ['until', 'Until', '--until <time>'],
  ['parentJob', 'ParentJob', '--parent-job <id>'],
];

export function registerBulkCommand(job: Command): void {
  const command = clientCommand(job, 'bulk', 'act on many jobs at once: those a filter matches, or --ids')
    .argument('<action>', `an action of the server's table (${JOB_ACTIONS.join(', ')})`)
    .option('--ids <ids>', 'comma-separated job ids, instead of a filter');
  for (const [, name, flag] of FILTERS) command.option(flag, `only jobs with this ${name} (as GET /Job takes it)`);
  command
    .option('-m, --comment <text>', "recorded in each job's history")
    .option('--dry-run', 'change nothing: say what would be done and what skipped')
    .addHelpText('after', '\nAt most 10,000 jobs per request. Exit status 1 when a job was skipped (not on a dry run).')
    .action((action: string, flags: BulkFlags) => bulk(contextOf(flags), action, flags));
}

function requestBody(flags: BulkFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const filter = Object.fromEntries(
    FILTERS.flatMap(([flag, name]) => (typeof flags[flag] === 'string' ? [[name, flags[flag]]] : [])),
  );
  if (flags.ids !== undefined) {
    if (Object.keys(filter).length > 0) throw new Error('give either --ids or filters, not both');
    const ids = flags.ids.split(',').map((s) => s.trim());
    // Ids go as numbers; anything else as given, for the server to refuse naming the field.
    body.JobIds = ids.map((id) => (/^\d{1,15}$/.test(id) ? Number(id) : id));
  } else {
    if (Object.keys(filter).length === 0)
      throw new Error('give the jobs: a filter (--status, --definition, --queue, …) or --ids');
    body.Filter = filter;
  }
  if (flags.comment !== undefined) body.Comment = flags.comment;
  if (flags.dryRun) body.DryRun = true;
  return body;
}

async function bulk(ctx: Ctx, action: string, flags: BulkFlags): Promise<void> {
  const answer: Json = await ctx.client.json('POST', `/Job/bulk/${seg(action)}`, requestBody(flags));
  const skipped: Array<{ Job: number; Reason: string }> = answer.Skipped ?? [];
  if (!answer.DryRun && skipped.length > 0) process.exitCode = 1;
  if (ctx.format !== 'table') return printObject(answer, ctx.format);
  const verb = answer.DryRun ? 'would be done' : 'done';
  write(`${action}: ${answer.Matched} matched, ${answer.Done} ${verb}, ${skipped.length} skipped`);
  for (const s of skipped) write(`  Job ${s.Job}: ${s.Reason}`);
  if (answer.DryRun) write('Dry run: nothing was changed.');
}
