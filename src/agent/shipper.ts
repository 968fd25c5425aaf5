import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session } from './connection.ts';
import { isSafeFileName } from './job-files.ts';
import { type AgentMessage, OUTPUT_CHUNK_BYTES } from './protocol.ts';
import type { Attempt } from './runner.ts';

export type Send = (message: AgentMessage) => Promise<boolean>;

/**
 * Sends bytes `from` up to `to` (or up to the file's current size when `to` is undefined) of a job file as
 * `output` chunks of at most OUTPUT_CHUNK_BYTES, reading one chunk at a time and waiting whenever the socket is
 * full. Resolves with the offset reached (less than `to` when the file is shorter or missing), or null when the
 * connection went away.
 */
export async function shipFile(
  send: Send,
  jobId: number,
  attempt: number,
  file: { name: string; path: string },
  from: number,
  to?: number,
): Promise<number | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return from;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return from;
    const end = to ?? st.size;
    const buffer = Buffer.allocUnsafe(Math.min(OUTPUT_CHUNK_BYTES, Math.max(end - from, 1)));
    let offset = from;
    while (offset < end) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - offset), offset);
      if (bytesRead === 0) break;
      const sent = await send({
        type: 'output',
        jobId,
        attempt,
        file: file.name,
        offset,
        data: buffer.toString('base64', 0, bytesRead),
      });
      if (!sent) return null;
      offset += bytesRead;
    }
    return offset;
  } finally {
    await handle.close();
  }
}

/** Bytes of this attempt's files already sent on `s`: a new connection ships every file again from offset 0. */
function offsetsFor(a: Attempt, s: Session): Map<string, number> {
  if (a.shipSession !== s) {
    a.shipSession = s;
    a.offsets = new Map();
  }
  return a.offsets;
}

/** New bytes of a running attempt's stdout.log and stderr.log. */
export async function shipLogs(a: Attempt, s: Session): Promise<void> {
  if (s.closed || a.state !== 'running') return;
  const offsets = offsetsFor(a, s);
  for (const [name, path] of [
    ['stdout.log', a.paths.stdout],
    ['stderr.log', a.paths.stderr],
  ] as const) {
    const from = offsets.get(name) ?? 0;
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      continue;
    }
    if (size <= from) continue;
    const reached = await shipFile((m) => s.send(m), a.jobId, a.attempt, { name, path }, from, size);
    if (reached === null) return;
    offsets.set(name, reached);
  }
}

/** For a finished attempt: the rest of every job file up to its reported size, then `finished`. Or `lost`. */
export async function sendReport(a: Attempt, s: Session): Promise<void> {
  if (s.closed) return;
  if (a.state === 'lost') {
    if (await s.send({ type: 'lost', jobId: a.jobId, attempt: a.attempt }))
      a.reportSent = { session: s, at: Date.now() };
    return;
  }
  const report = a.report;
  if (!report) return;
  const offsets = offsetsFor(a, s);
  for (const f of report.files) {
    const path = filePath(a, f.name);
    if (!path) continue;
    const from = offsets.get(f.name) ?? 0;
    if (from >= f.size) continue;
    const reached = await shipFile((m) => s.send(m), a.jobId, a.attempt, { name: f.name, path }, from, f.size);
    if (reached === null) return;
    offsets.set(f.name, reached);
  }
  if (await s.send(report)) a.reportSent = { session: s, at: Date.now() };
}

function filePath(a: Attempt, name: string): string | null {
  if (name === 'stdout.log') return a.paths.stdout;
  if (name === 'stderr.log') return a.paths.stderr;
  return isSafeFileName(Buffer.from(name, 'utf8')) ? join(a.paths.files, name) : null;
}
