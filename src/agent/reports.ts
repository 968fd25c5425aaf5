import { rmSync } from 'node:fs';
import { listJobFiles } from './job-files.ts';
import { type Log, reason } from './log.ts';
import { maskText } from './mask.ts';
import { encode, type FinishedMessage, MAX_LINE_BYTES } from './protocol.ts';
import type { ProcessEnd } from './process-end.ts';
import type { Attempt } from './runner.ts';
import { collectOut } from './scripts.ts';

/**
 * The `finished` report of an attempt whose process ended (or could not start): return code or signal, Out
 * values, and the job files with their sizes at this moment (the sizes the files are shipped up to).
 */
export function finalReport(a: Attempt, end: ProcessEnd, log: Log): FinishedMessage {
  const started = end.error === undefined;
  const files = started ? listJobFiles(a.paths, log) : [];
  let out: Record<string, string> = {};
  if (started && a.run) {
    try {
      out = collectOut(a.run.scriptType, a.run.outNames, a.paths);
      // Masked before the report is spooled: the spool on disk never holds a secret in clear. The files the values
      // were read from go at once rather than with the work folder once the server acknowledges.
      const mask = a.run.mask ?? [];
      if (mask.length > 0) {
        for (const [name, value] of Object.entries(out)) out[name] = maskText(value, mask);
        rmSync(a.paths.out, { force: true });
        rmSync(a.paths.outVars, { force: true });
      }
    } catch (err) {
      log(`${a.jobId}.${a.attempt}: cannot read Out parameters: ${reason(err)}`);
    }
  }
  const report: FinishedMessage = {
    type: 'finished',
    jobId: a.jobId,
    attempt: a.attempt,
    startTime: a.startTime ?? end.endTime,
    endTime: end.endTime,
    returnCode: end.returnCode,
    signal: end.signal,
    killed: a.killRequested,
    out,
    files: files.map(({ name, size }) => ({ name, size })),
  };
  if (end.error !== undefined) report.error = end.error;
  fitReport(report, log);
  return report;
}

/**
 * Keeps a report within one protocol line (a longer line would be refused on every reconnect, for ever): drops
 * the largest Out values, then trailing files, until it fits.
 */
export function fitReport(report: FinishedMessage, log: Log): void {
  const limit = MAX_LINE_BYTES - 4096;
  const size = () => Buffer.byteLength(encode(report));
  if (size() <= limit) return;
  const names = Object.keys(report.out).sort((x, y) => (report.out[y]?.length ?? 0) - (report.out[x]?.length ?? 0));
  for (const name of names) {
    log(`${report.jobId}.${report.attempt}: Out parameter ${name} dropped, the report would be too long`);
    delete report.out[name];
    if (size() <= limit) return;
  }
  while (report.files.length > 2 && size() > limit) report.files.pop();
}
