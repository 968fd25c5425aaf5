/**
 * Masks secret values in a job's output, as CI systems do: every occurrence of a value becomes `***`. Pure: no
 * I/O. It works on bytes, so a value (or a multi-byte UTF-8 character) split across two chunks is found all the
 * same, and bytes that are not part of a value pass through unchanged.
 *
 * Where occurrences overlap (`abcd` and `cdef` in `abcdef`, or `aa` in `aaa`), their union becomes one `***`:
 * masking them one after the other would leave the tail of the second in clear.
 */

import { itemAt } from '../domain/item-at.ts';

export const MASK = Buffer.from('***');

/** Values worth masking: non-empty, each once, as UTF-8 bytes, the longest first. */
function masks(values: readonly string[]): Buffer[] {
  return [...new Set(values.filter((v) => v.length > 0))]
    .map((v) => Buffer.from(v, 'utf8'))
    .sort((a, b) => b.length - a.length);
}

/**
 * A streaming masker: `push` each chunk and write what it returns, then write what `end` returns. Output is the
 * same however the input was cut into chunks. It holds back at most the longest value's length minus one byte:
 * the bytes whose fate the next chunk may still change.
 */
export class Masker {
  private readonly values: Buffer[];
  private readonly longest: number;
  /** Bytes not yet decided (at most `longest - 1`). */
  private tail: Buffer = Buffer.alloc(0);
  /** How many bytes at the start of `tail` belong to an occurrence whose `***` was already written. */
  private covered = 0;

  constructor(values: readonly string[]) {
    this.values = masks(values);
    this.longest = this.values[0]?.length ?? 0;
  }

  /** True when there is nothing to mask: the caller may copy bytes as they are. */
  get empty(): boolean {
    return this.values.length === 0;
  }

  push(chunk: Buffer): Buffer {
    if (this.empty) return chunk;
    return this.scan(this.tail.length === 0 ? chunk : Buffer.concat([this.tail, chunk]), false);
  }

  /** The rest, once the input has ended. */
  end(): Buffer {
    if (this.empty) return Buffer.alloc(0);
    return this.scan(this.tail, true);
  }

  /**
   * Decides every position before `limit` (every value fits after it, or the input has ended): literal bytes
   * pass, occurrences become `***`; the rest is kept for the next call.
   */
  private scan(buf: Buffer, final: boolean): Buffer {
    const limit = final ? buf.length : buf.length - (this.longest - 1);
    const out: Buffer[] = [];
    // Bytes before `covered` are inside an occurrence already masked; literal bytes start there.
    let covered = this.covered;
    // Where each value next occurs at or after the scan position (Infinity: nowhere in `buf`).
    const next = this.values.map(() => -1);
    for (let i = 0; i < limit; ) {
      let at = Number.POSITIVE_INFINITY;
      let length = 0;
      for (const [k, v] of this.values.entries()) {
        if (itemAt(next, k) < i) {
          const p = buf.indexOf(v, i);
          next[k] = p < 0 ? Number.POSITIVE_INFINITY : p;
        }
        // Longest first: at equal positions the longest value wins, so a longer one is not skipped.
        if (itemAt(next, k) < at) {
          at = itemAt(next, k);
          length = v.length;
        }
      }
      if (at >= limit) break;
      if (at >= covered) out.push(buf.subarray(covered, at), MASK);
      covered = Math.max(covered, at + length);
      i = at + 1;
    }
    const decided = Math.max(limit, 0);
    if (decided > covered) out.push(buf.subarray(covered, decided));
    this.covered = Math.max(covered - decided, 0);
    // A copy: the held bytes must not keep the whole chunk alive.
    this.tail = Buffer.from(buf.subarray(decided));
    return out.length === 1 ? itemAt(out, 0) : Buffer.concat(out);
  }
}

/** Masks a whole text at once (Out parameter values): the same rules as the streaming masker. */
export function maskText(text: string, values: readonly string[]): string {
  const m = new Masker(values);
  if (m.empty) return text;
  return Buffer.concat([m.push(Buffer.from(text, 'utf8')), m.end()]).toString('utf8');
}
