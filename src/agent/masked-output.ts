import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { Masker } from './mask.ts';

/** A pipe being copied into a log file with secrets masked. */
export interface MaskedCopy {
  /** Resolves once every byte read is written and the file is closed (the file is complete). */
  done: Promise<void>;
  /** Stops reading now (a process the job left behind still holds the pipe) and completes the file. */
  cut(): void;
}

/**
 * Copies a job's stdout or stderr pipe into its log file (an open fd, which the copy closes), every secret value
 * replaced by `***`. Reading pauses while the file falls behind, so a fast writer cannot fill the agent's memory.
 * Write errors end the copy (the job's output is then short, never unmasked).
 */
export function copyMasked(source: Readable, fd: number, values: readonly string[]): MaskedCopy {
  const masker = new Masker(values);
  const file = createWriteStream('', { fd, autoClose: true });
  let finished = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  file.once('close', () => resolveDone());
  const onData = (chunk: Buffer) => {
    const masked = masker.push(chunk);
    if (masked.length > 0 && !file.write(masked)) source.pause();
  };
  const finish = () => {
    if (finished) return;
    finished = true;
    source.off('data', onData);
    source.destroy();
    file.end(masker.end());
  };
  file.on('drain', () => source.resume());
  file.on('error', () => {
    finished = true;
    source.off('data', onData);
    source.destroy();
    file.destroy();
  });
  source.on('data', onData);
  source.once('end', finish);
  source.once('close', finish);
  source.once('error', finish);
  return { done, cut: finish };
}
