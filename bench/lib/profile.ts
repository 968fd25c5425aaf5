/**
 * `--profile`: one more measurement with CPU profiles written into a folder (`--profile-dir`, else a new one in the
 * temp dir, kept), each new profile summarised over the measurement's window only (cpuprofile-summary.ts). The
 * figures of a run always come from its unprofiled measurements.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CpuProfile, formatProfileSummary, summarizeCpuProfile } from '../cpuprofile-summary.ts';
import { ROOT } from '../harness.ts';

/** CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile of a main thread (tsx's loader thread has its own), or the agent's. */
const PROFILE = /\.\d+\.0\.\d+\.cpuprofile$|^CPU\.agent\.\d+\.cpuprofile$/;

export interface Window {
  /** CLOCK_MONOTONIC µs (harness.ts `monoUs`) around the measurement. */
  startUs: number;
  endUs: number;
}

/**
 * Runs `measure` with the node flags that profile into the folder, then summarises every new profile with samples in
 * the window. `describe` gives each profile's heading, a note under it, and what the "per request" figures divide by.
 */
export async function profileRun<M extends Window>(
  dirOption: string | undefined,
  measure: (nodeFlags: string[], dir: string) => Promise<M>,
  describe: (m: M, file: string) => { heading: string; note?: string; items: number },
): Promise<string> {
  const dir = dirOption ?? mkdtempSync(join(tmpdir(), 'millrace-profile-'));
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  const m = await measure(['--cpu-prof', `--cpu-prof-dir=${dir}`], dir);
  const parts: string[] = [];
  for (const file of readdirSync(dir).filter((f) => PROFILE.test(f) && !before.has(f))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const summary = summarizeCpuProfile(profile, { window: { startUs: m.startUs, endUs: m.endUs }, root: ROOT });
    if (!summary.windowed || summary.samples < 10) continue; // a process that did not run in the window
    const d = describe(m, file);
    parts.push(
      `${d.heading}: ${join(dir, file)}\n${d.note ? `${d.note}\n` : ''}\n${formatProfileSummary(summary, d.items)}`,
    );
  }
  return parts.length ? parts.join('\n\n') : `(no usable .cpuprofile was written to ${dir})`;
}
