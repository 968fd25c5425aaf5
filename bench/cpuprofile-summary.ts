/**
 * Summarises a V8 `.cpuprofile` (written by `node --cpu-prof`) as text: where the CPU time went, by function
 * and by package or source file, both as self time and as inclusive time.
 *
 *   node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--top N]
 *
 * `bench/get-object.ts --profile` uses it on the server's profile, restricted to the window in which the load
 * generator ran (the profile's timestamps and `process.hrtime` both read CLOCK_MONOTONIC on Linux).
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  name: string;
  ms: number;
  /** Share of the profiled time (idle included), in per cent. */
  pct: number;
}

export interface ProfileSummary {
  /** Time covered by the samples kept, in ms. */
  totalMs: number;
  /** Time in `(idle)`: the event loop waiting, i.e. spare capacity of the core. */
  idleMs: number;
  samples: number;
  /** False when a window was asked for but no sample fell in it, so the whole profile is shown. */
  windowed: boolean;
  /** Leaf frames: the function that was on the CPU. */
  selfByFunction: Row[];
  /** Leaf frames grouped by package, source file, Node module or V8 pseudo-frame. */
  selfByCategory: Row[];
  /** Each sample charged to the innermost frame that belongs to a package or to our sources. */
  ownerByCategory: Row[];
  /** Samples in which the category appears anywhere on the stack (each sample counted once per category). */
  inclusiveByCategory: Row[];
  /** Inclusive time of our own functions (src/, or dist/ when the compiled build ran). */
  inclusiveOurs: Row[];
  /** Inclusive time of every function, V8 pseudo-frames and the event loop's entry points left out. */
  inclusiveAll: Row[];
}

const PSEUDO: Record<string, string> = {
  '(garbage collector)': 'V8: garbage collector',
  '(program)': 'V8: (program) native code not attributed to JS',
  '(idle)': 'idle (event loop waiting)',
  '(root)': '(root)',
};

/** Package name, `src/…` file, `node:` module or V8 pseudo-frame of a call frame. */
export function categoryOf(frame: CallFrame, root: string): string {
  const pseudo = PSEUDO[frame.functionName];
  if (pseudo && frame.url === '') return pseudo;
  const url = frame.url;
  if (url === '') return 'native/builtin (no script)';
  if (url.startsWith('node:')) {
    const m = /^node:(internal\/[^/]+|[^/]+)/.exec(url);
    return `node:${m?.[1]?.replace(/^internal\//, 'internal/') ?? url.slice(5)}`;
  }
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? path);
  }
  const rel = relative(root, path);
  return rel.startsWith('..') ? path : rel;
}

const isOwner = (category: string): boolean =>
  !category.startsWith('node:') &&
  !category.startsWith('V8:') &&
  !category.startsWith('native/') &&
  !category.startsWith('(');

function functionLabel(frame: CallFrame, category: string): string {
  const name = frame.functionName || '(anonymous)';
  if (PSEUDO[frame.functionName] && frame.url === '') return PSEUDO[frame.functionName] as string;
  if (frame.url === '') return `${name} [native]`;
  // tsx strips the whitespace of the sources it compiles, so their line numbers say nothing: show the file only.
  if (category.endsWith('.ts')) return `${name} (${category})`;
  const nm = frame.url.lastIndexOf('/node_modules/');
  const where = nm >= 0 ? frame.url.slice(nm + '/node_modules/'.length) : category;
  return `${name} (${where}:${frame.lineNumber + 1})`;
}

function rows(map: Map<string, number>, totalMs: number, limit: number): Row[] {
  return [...map]
    .map(([name, ms]) => ({ name, ms, pct: totalMs > 0 ? (100 * ms) / totalMs : 0 }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, limit);
}

const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);

/**
 * `window` (µs on the profile's clock) keeps only the samples taken inside it. `root` is the project folder,
 * so our files show as `src/…`.
 */
export function summarizeCpuProfile(
  profile: CpuProfile,
  options: { window?: { startUs: number; endUs: number }; root?: string; top?: number } = {},
): ProfileSummary {
  const root = options.root ?? process.cwd();
  const top = options.top ?? 25;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) byId.set(n.id, n);
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const category = new Map<number, string>();
  for (const n of profile.nodes) category.set(n.id, categoryOf(n.callFrame, root));

  // Sample i lasted until sample i+1 was taken (the DevTools convention); the last one gets the mean.
  const times: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) {
    t += d;
    times.push(t);
  }
  const n = profile.samples.length;
  const meanInterval = n > 1 ? ((times[n - 1] ?? 0) - (times[0] ?? 0)) / (n - 1) : 0;
  const inWindow = (i: number): boolean => {
    const w = options.window;
    const ti = times[i] ?? 0;
    return !w || (ti >= w.startUs && ti <= w.endUs);
  };
  let windowed = options.window !== undefined;
  if (windowed && !profile.samples.some((_, i) => inWindow(i))) windowed = false;

  const selfFn = new Map<string, number>();
  const selfCat = new Map<string, number>();
  const ownerCat = new Map<string, number>();
  const inclCat = new Map<string, number>();
  const inclOurs = new Map<string, number>();
  const inclAll = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    if (windowed && !inWindow(i)) continue;
    const id = profile.samples[i] as number;
    const ms = ((i + 1 < n ? (times[i + 1] ?? 0) - (times[i] ?? 0) : meanInterval) || 0) / 1000;
    const leaf = byId.get(id);
    if (!leaf) continue;
    kept += 1;
    totalMs += ms;
    const leafCat = category.get(id) ?? '?';
    if (leaf.callFrame.functionName === '(idle)') idleMs += ms;
    add(selfFn, functionLabel(leaf.callFrame, leafCat), ms);
    add(selfCat, leafCat, ms);
    const seenCat = new Set<string>();
    const seenFn = new Set<string>();
    const seenAll = new Set<string>();
    let owner: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const node = byId.get(cur);
      const cat = category.get(cur) ?? '?';
      if (!node || cat === '(root)') continue;
      if (owner === undefined && isOwner(cat)) owner = cat;
      seenCat.add(cat);
      const label = functionLabel(node.callFrame, cat);
      if (cat.startsWith('src/') || cat.startsWith('dist/')) seenFn.add(label);
      if (!cat.startsWith('V8:') && !cat.startsWith('idle') && node.callFrame.functionName !== '') seenAll.add(label);
    }
    add(ownerCat, owner ?? leafCat, ms);
    for (const c of seenCat) add(inclCat, c, ms);
    for (const f of seenFn) add(inclOurs, f, ms);
    for (const f of seenAll) add(inclAll, f, ms);
  }
  return {
    totalMs,
    idleMs,
    samples: kept,
    windowed,
    selfByFunction: rows(selfFn, totalMs, top),
    selfByCategory: rows(selfCat, totalMs, top),
    ownerByCategory: rows(ownerCat, totalMs, top),
    inclusiveByCategory: rows(inclCat, totalMs, top),
    inclusiveOurs: rows(inclOurs, totalMs, top),
    inclusiveAll: rows(inclAll, totalMs, top * 2),
  };
}

function table(title: string, list: Row[], perRequestUs?: (ms: number) => number): string {
  const lines = [title];
  for (const r of list) {
    const per = perRequestUs ? `${perRequestUs(r.ms).toFixed(1).padStart(8)} µs/req` : '';
    lines.push(`  ${r.pct.toFixed(1).padStart(5)} %  ${r.ms.toFixed(0).padStart(7)} ms${per}  ${r.name}`);
  }
  return lines.join('\n');
}

/** Text report; with `requests` (answered inside the window) every row also shows its cost per request. */
export function formatProfileSummary(s: ProfileSummary, requests?: number): string {
  const per = requests && requests > 0 ? (ms: number) => (ms * 1000) / requests : undefined;
  const busy = s.totalMs - s.idleMs;
  const head = [
    `${s.samples} samples over ${(s.totalMs / 1000).toFixed(1)} s${s.windowed ? ' (load window only)' : ' (whole profile)'};` +
      ` busy ${((100 * busy) / Math.max(s.totalMs, 1e-9)).toFixed(1)} %` +
      (per ? `, ${per(busy).toFixed(1)} µs of CPU per request (${requests} requests)` : ''),
  ];
  return [
    ...head,
    table('Self time by package / file (leaf frame):', s.selfByCategory, per),
    table('Self time charged to the innermost package or src/ frame (who asked for it):', s.ownerByCategory, per),
    table('Inclusive time by package / file (on the stack):', s.inclusiveByCategory, per),
    table('Inclusive time of our functions (src/ or dist/):', s.inclusiveOurs, per),
    table('Self time by function:', s.selfByFunction, per),
    table('Inclusive time by function (named frames):', s.inclusiveAll, per),
  ].join('\n\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, root: { type: 'string' } },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write(
      'usage: node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--top N] [--root DIR]\n',
    );
    process.exit(64);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const summary = summarizeCpuProfile(profile, { top: Number(values.top), root: values.root ?? process.cwd() });
  process.stdout.write(`${formatProfileSummary(summary)}\n`);
}
