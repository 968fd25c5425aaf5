import { createHash } from 'node:crypto';

/**
 * A job output whose every byte has one right place: lines of increasing numbers of equal width that start from
 * the job's own id (`<jobId>000000000`, `<jobId>000000001`, …), cut at a byte count. A chunk stored at the wrong
 * offset, twice, or in another job's file changes the checksum. The job writes it with `seq` (coreutils, fast);
 * `numberedLinesDigest` makes the same bytes in this process, independently of the shell.
 */
export function numberedLinesScript(bytes: number): string {
  return `seq "\${MILLRACE_JOB_ID}000000000" "\${MILLRACE_JOB_ID}999999999" | head -c ${bytes}`;
}

/** The SHA-256 (hex) of what `numberedLinesScript(bytes)` writes for the job `jobId`. */
export function numberedLinesDigest(jobId: number, bytes: number): string {
  const hash = createHash('sha256');
  let next = jobId * 1_000_000_000;
  let left = bytes;
  const linesPerPiece = 65_536;
  while (left > 0) {
    let piece = '';
    for (let i = 0; i < linesPerPiece; i++) piece += `${next++}\n`;
    const take = Math.min(left, piece.length);
    hash.update(take === piece.length ? piece : piece.slice(0, take));
    left -= take;
  }
  return hash.digest('hex');
}
