import { itemAt } from '../domain/item-at.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JobFileRecord } from '../domain/job.ts';
import { MillraceError } from '../errors.ts';
import type { JobService } from '../services/jobs.ts';

/** A single byte range of `Range: bytes=…` against `size`; undefined for none (or several: the whole file is sent). */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined;
  const a = itemAt(m, 1);
  const b = itemAt(m, 2);
  if (a === '' && b === '') return undefined;
  let start: number;
  let end: number;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
    if (b !== '' && Number(b) < start) return undefined;
  }
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * Streams a job file from the disk, whole or one range, never loading it into memory. The size is
 * read at the time of the request, so a client can follow a running job's output with `Range: bytes=<n>-`.
 */
export async function sendJobFile(
  req: FastifyRequest,
  reply: FastifyReply,
  found: { file: JobFileRecord; size: number },
  jobs: JobService,
): Promise<FastifyReply> {
  const { file, size } = found;
  describeFile(reply, file);
  const range = parseRange(req.headers.range, size);
  if (range === 'unsatisfiable')
    throw new MillraceError(416, 'RANGE_NOT_SATISFIABLE', `The file is ${size} bytes long`, {
      'Content-Range': `bytes */${size}`,
    });
  if (size === 0) return reply.code(200).header('Content-Length', 0).send('');
  const { start, end } = range ?? { start: 0, end: size - 1 };
  if (range) reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`);
  reply.header('Content-Length', end - start + 1);
  return reply.send(jobs.openFile(file, start, end));
}

/**
 * The answer to HEAD: the file's headers and its size now, without opening it. A follower asks it before reading
 * on (the dashboard's log follower), so it never asks for a range past the end, which browsers log as an error.
 */
export function sendJobFileHead(reply: FastifyReply, found: { file: JobFileRecord; size: number }): FastifyReply {
  describeFile(reply, found.file);
  return reply.code(200).header('Content-Length', found.size).send();
}

function describeFile(reply: FastifyReply, file: JobFileRecord): void {
  const type =
    file.name.endsWith('.log') || file.format === 'text/plain'
      ? 'text/plain; charset=utf-8'
      : 'application/octet-stream';
  reply.header('Accept-Ranges', 'bytes').type(type);
  reply.header('Content-Disposition', `inline; filename="${file.name.replace(/["\\\r\n]/g, '_')}"`);
}
