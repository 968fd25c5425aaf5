import type { Command } from 'commander';
import { type ClientFlags, clientCommand, contextOf } from './context.ts';
import { type Column, printList } from './output.ts';

/** `millrace forecast`: the starts the scheduler will make in a range, every page of `GET /forecast`. */

interface ForecastFlags extends ClientFlags {
  from: string;
  until: string;
  definition?: string;
  queue?: string;
}

const COLUMNS: Column[] = [
  { header: 'START', value: (e) => e.Start },
  { header: 'DEFINITION', value: (e) => e.JobDefinition },
  { header: 'SOURCE', value: (e) => e.Source },
  { header: 'JOB', value: (e) => e.Job },
  { header: 'QUEUE', value: (e) => e.Queue },
  { header: 'WINDOW', value: (e) => e.TimeWindow },
];

export function registerForecastCommand(program: Command): void {
  clientCommand(program, 'forecast', 'list the starts the scheduler will make in a range, in order')
    .requiredOption('--from <time>', 'start of the range, "YYYY/MM/DD HH:MM:SS <zone>" or ISO-8601')
    .requiredOption('--until <time>', 'end of the range (not included), at most 366 days after --from')
    .option('--definition <definition>', 'only starts of this definition')
    .option('--queue <queue>', 'only starts in this queue')
    .action(async (flags: ForecastFlags) => {
      const ctx = contextOf(flags);
      const query = { From: flags.from, Until: flags.until, JobDefinition: flags.definition, Queue: flags.queue };
      printList(await ctx.client.listAll('/forecast', query), COLUMNS, ctx.format);
    });
}
