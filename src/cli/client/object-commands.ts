import type { Command } from 'commander';
import { clientCommand, contextOf, type ClientFlags, type Ctx, reportFailure } from './context.ts';
import { seg } from './http.ts';
import { type Column, printJson, printList, printObject, statusColour, write } from './output.ts';

/** `millrace def | queue | server | msg | alert …`: lists and the actions operators take on them. */

const keyOf = (o: Record<string, unknown>) =>
  o.Partition !== undefined && o.Partition !== null ? `${o.Partition}.${o.Name}` : o.Name;

const DEFINITION_COLUMNS: Column[] = [
  { header: 'DEFINITION', value: keyOf },
  { header: 'TYPE', value: (d) => d.JobDefinitionType },
  { header: 'QUEUE', value: (d) => d.DefaultQueue },
  { header: 'DESCRIPTION', value: (d) => d.Description },
];
const QUEUE_COLUMNS: Column[] = [
  { header: 'QUEUE', value: keyOf },
  { header: 'HELD', value: (q) => q.Held, colour: (q) => (q.Held ? 'yellow' : undefined) },
  { header: 'SIZE', value: (q) => q.ExecutionSize },
  { header: 'TIMEWINDOW', value: (q) => q.TimeWindow },
  { header: 'DESCRIPTION', value: (q) => q.Description },
];
const SERVER_COLUMNS: Column[] = [
  { header: 'PROCESSSERVER', value: keyOf },
  { header: 'STATUS', value: (p) => p.Status, colour: (p) => statusColour(p.Status) },
  { header: 'DESIRED', value: (p) => p.DesiredStatus },
  { header: 'SIZE', value: (p) => p.ExecutionSize },
  { header: 'QUEUEPROVIDERS', value: (p) => p.QueueProviders },
];
const MESSAGE_COLUMNS: Column[] = [
  { header: 'ID', value: (m) => m.uniqueId },
  { header: 'STATUS', value: (m) => m.ReplyStatus, colour: (m) => statusColour(m.ReplyStatus) },
  { header: 'FROM', value: (m) => m.SenderObject },
  { header: 'CREATED', value: (m) => m.CreationTime },
  { header: 'EXPECTS', value: (m) => m.ReplyExpression },
  { header: 'MESSAGE', value: (m) => m.FullText },
];
const USER_MESSAGE_COLUMNS: Column[] = [
  { header: 'ID', value: (m) => m.uniqueId },
  { header: 'STATUS', value: (m) => m.Status },
  { header: 'JOB', value: (m) => m.Job },
  { header: 'RESPONSES', value: (m) => (m.Responses as Array<{ Response: string }> | null)?.map((r) => r.Response) },
  { header: 'TEXT', value: (m) => m.Text },
];
const ALERT_COLUMNS: Column[] = [
  { header: 'ID', value: (a) => a.uniqueId },
  { header: 'STATUS', value: (a) => a.Status, colour: (a) => (a.Status === 'NotAcknowledged' ? 'yellow' : undefined) },
  { header: 'ESCALATION', value: (a) => a.AlertEscalation },
  { header: 'ABOUT', value: (a) => a.SourceObject },
  { header: 'CREATED', value: (a) => a.CreationTime },
  { header: 'MESSAGE', value: (a) => a.Message },
];

interface ListFlags extends ClientFlags {
  partition?: string;
  search?: string;
  limit?: string;
}

function limitOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--limit ${text}: give a positive whole number`);
  return n;
}

/** `<noun> list` over `GET /<Type>` with the list query of the interface. */
function objectList(parent: Command, type: string, columns: Column[], description: string): void {
  clientCommand(parent, 'list', description)
    .option('--partition <partition>', 'only objects of this partition')
    .option('--search <text>', 'only objects whose name holds this text')
    .option('--limit <n>', 'at most this many')
    .action(async (flags: ListFlags) => {
      const ctx = contextOf(flags);
      const query = { Partition: flags.partition, Search: flags.search };
      printList(await ctx.client.listAll(`/${type}`, query, limitOf(flags.limit)), columns, ctx.format);
    });
}

/** Runs `one` for each target; a failing target is reported on its own line and the others still run. */
async function each(ctx: Ctx, targets: string[], one: (target: string) => Promise<unknown>, say: string) {
  const results: unknown[] = [];
  for (const target of targets) {
    try {
      results.push(await one(target));
      if (ctx.format === 'table') write(`${target}: ${say}`);
    } catch (err) {
      reportFailure(err);
    }
  }
  if (ctx.format === 'json') printJson(results);
  else if (ctx.format === 'yaml') printObject(results, 'yaml');
}

export function registerObjectCommands(program: Command): void {
  const def = program.command('def').description('job definitions: list, show, stats (see also `millrace apply`)');
  objectList(def, 'JobDefinition', DEFINITION_COLUMNS, 'list job definitions');
  clientCommand(def, 'show', 'show a job definition')
    .argument('<definition>', '<partition>.<name>')
    .action(async (key: string, flags: ClientFlags) => {
      const ctx = contextOf(flags);
      printObject(await ctx.client.get(`/JobDefinition/${seg(key)}`), ctx.format);
    });

  const queue = program.command('queue').description('queues: list, hold, release');
  objectList(queue, 'Queue', QUEUE_COLUMNS, 'list queues');
  for (const [action, held] of [
    ['hold', true],
    ['release', false],
  ] as const)
    clientCommand(queue, action, `${action} queues (${held ? 'no job starts' : 'jobs start again'})`)
      .argument('<queue...>', '<partition>.<name>')
      .action(async (keys: string[], flags: ClientFlags) => {
        const ctx = contextOf(flags);
        await each(ctx, keys, (k) => ctx.client.json('PUT', `/Queue/${seg(k)}`, { Held: held }), `Held ${held}`);
      });

  const server = program.command('server').description('process servers: list, start, stop');
  objectList(server, 'ProcessServer', SERVER_COLUMNS, 'list process servers');
  for (const action of ['start', 'stop'] as const)
    clientCommand(server, action, `${action} process servers`)
      .argument('<server...>', '<partition>.<name>')
      .action(async (keys: string[], flags: ClientFlags) => {
        const ctx = contextOf(flags);
        await each(
          ctx,
          keys,
          (k) => ctx.client.json('PUT', `/ProcessServer/${seg(k)}/${action}`),
          action === 'stop' ? 'stopped' : 'started',
        );
      });

  const msg = program.command('msg').description('operator and user messages: list, reply');
  clientCommand(msg, 'list', 'operator messages waiting for a reply (--all: every one; --user: user messages)')
    .option('--all', 'every operator message, replied or not')
    .option('--user', 'user messages (approvals) instead of operator messages')
    .option('--limit <n>', 'at most this many')
    .action(async (flags: ClientFlags & { all?: boolean; user?: boolean; limit?: string }) => {
      const ctx = contextOf(flags);
      const limit = limitOf(flags.limit);
      if (flags.user)
        return printList(await ctx.client.listAll('/UserMessage', {}, limit), USER_MESSAGE_COLUMNS, ctx.format);
      const query = { ReplyStatus: flags.all ? undefined : 'Required' };
      printList(await ctx.client.listAll('/OperatorMessage', query, limit), MESSAGE_COLUMNS, ctx.format);
    });
  clientCommand(msg, 'reply', 'reply to an operator message (or with --user, answer a user message)')
    .argument('<id>', 'message id')
    .argument('<reply>', 'the reply (an operator message’s must match its expression)')
    .option('--user', 'a user message: <reply> is one of its responses')
    .option('--comment <text>', 'comment of a user-message reply')
    .action(async (id: string, reply: string, flags: ClientFlags & { user?: boolean; comment?: string }) => {
      const ctx = contextOf(flags);
      const answer = flags.user
        ? await ctx.client.json('PUT', `/UserMessage/${seg(id)}/reply`, {
            Response: reply,
            ...(flags.comment !== undefined ? { ReplyComment: flags.comment } : {}),
          })
        : await ctx.client.json('PUT', `/OperatorMessage/${seg(id)}/reply`, { Reply: reply });
      if (ctx.format === 'table') write(`${flags.user ? 'User message' : 'Operator message'} ${id}: replied ${reply}`);
      else printObject(answer, ctx.format);
    });

  const alert = program.command('alert').description('alerts: list, acknowledge');
  clientCommand(alert, 'list', 'list alerts, newest first')
    .option('--status <status>', 'only alerts in this status (NotAcknowledged, Acknowledged, Escalated, Replied)')
    .option('--limit <n>', 'at most this many')
    .action(async (flags: ClientFlags & { status?: string; limit?: string }) => {
      const ctx = contextOf(flags);
      const items = await ctx.client.listAll('/Alert', { Status: flags.status }, limitOf(flags.limit));
      printList(items, ALERT_COLUMNS, ctx.format);
    });
  clientCommand(alert, 'ack', 'acknowledge alerts (stops their escalation)')
    .argument('<id...>', 'alert ids')
    .action(async (ids: string[], flags: ClientFlags) => {
      const ctx = contextOf(flags);
      const reply = (id: string) => ctx.client.json('PUT', `/Alert/${seg(id)}/reply`, { Response: 'Acknowledge' });
      await each(ctx, ids, reply, 'acknowledged');
    });
}
