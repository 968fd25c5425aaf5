/**
 * The frame every benchmark runs in, so that a benchmark file holds its measurement and nothing else. From the
 * declared options (lib/options.ts) it parses the command line, answers `--help`, refuses bad input in one line
 * (exit status 2), pins the processes, makes a scratch folder and an API key, and prints the header with the
 * machine facts. At the end it prints the load average and the SUMMARY line with the target's verdict, writes the
 * `--json` file, stops every process it started and sets the exit status (1 failed, 2 target missed with --check).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { canPin, pinSelf, ROOT, runBenchmark, scratch, stopAll } from '../harness.ts';
import { flag, parseOptions, path, type Specs, UsageError, usage, type Values } from './options.ts';
import { loadText, machine, say, writeResults } from './report.ts';

/** The options the frame adds (each only when the benchmark asks for it; otherwise off). */
export interface Standard {
  pin: boolean;
  json: string | undefined;
  check: boolean;
  keep: boolean;
  profile: boolean;
  profileDir: string | undefined;
}

export interface Context<O> {
  opts: O & Standard;
  /** The machine's CPUs, counted before this process pinned itself. */
  cpus: number;
  /** A fresh folder, deleted at the end unless --keep. */
  work: string;
  /** The admin API key for the servers of this run. */
  apiKey: string;
}

export interface Outcome {
  /** The last line, after "SUMMARY ": the figures that count, beside their anchors and targets. */
  summary: string;
  /** Whether the targets were met: MEETS TARGET or BELOW TARGET ends the summary; --check exits 2 when not. */
  meets?: boolean;
  /** Why the run failed although it measured (exit status 1), e.g. a feed client that missed events. */
  failure?: string;
  /** The `--json` file after the run's envelope. */
  results: Record<string, unknown>;
}

export interface Definition<D extends Specs> {
  /** The npm script (`bench:b2`); without one the command is `node --import tsx <file>`. */
  script?: string;
  /** The header's title, e.g. "B2 spawn-limited end-to-end". */
  title: string | ((opts: Values<D> & Standard) => string);
  /** What it measures, for --help. */
  about: string;
  options: D;
  /**
   * `self`: this process is the load generator on core 1, the servers run on core 0; `servers`: only what it starts
   * is pinned. Either offers --no-pin. Without it nothing is pinned.
   */
  pin?: 'self' | 'servers';
  /** Offers --check, "exit with status 2 when <target>". */
  target?: string;
  /** Offers --profile (the text says what is profiled) and --profile-dir. */
  profile?: string;
  /** Offers --keep: the scratch folder is kept and its path printed. */
  keep?: boolean;
  /** Why these options cannot go together (a usage error, exit status 2), or undefined. */
  refuse?: (opts: Values<D>) => string | undefined;
  run(ctx: Context<Values<D>>): Promise<Outcome>;
}

function standardSpecs(def: Definition<Specs>): Specs {
  return {
    ...(def.pin
      ? { pin: flag('do not use taskset (results are then not comparable with pinned ones)', { default: true }) }
      : {}),
    ...(def.profile
      ? {
          profile: flag(def.profile),
          profileDir: path('where the .cpuprofile files go (default: a new folder in the temp dir, kept)', 'DIR'),
        }
      : {}),
    ...(def.keep ? { keep: flag('keep the data folder (its path is printed)') } : {}),
    json: path('also write every measurement as JSON'),
    ...(def.target ? { check: flag(`exit with status 2 when ${def.target}`) } : {}),
  };
}

export function benchmark<D extends Specs>(def: Definition<D>): void {
  const specs = { ...def.options, ...standardSpecs(def as unknown as Definition<Specs>) };
  const args = process.argv.slice(2);
  const file = relative(ROOT, process.argv[1] ?? '');
  const invoke = def.script ? `npm run ${def.script}` : `node --import tsx ${file}`;
  const usageError = (message: string) => {
    process.stderr.write(`${def.script ?? file}: ${message} (--help lists the options)\n`);
    process.exitCode = 2;
  };
  let parsed: Values<Specs> | undefined;
  try {
    parsed = parseOptions(specs, args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    usageError(err.message);
    return;
  }
  if (!parsed) {
    say(usage(def.script ? `${invoke} --` : invoke, def.about, specs));
    return;
  }
  const none: Standard = {
    pin: false,
    json: undefined,
    check: false,
    keep: false,
    profile: false,
    profileDir: undefined,
  };
  const opts = { ...none, ...parsed } as Values<D> & Standard;
  const refused = def.refuse?.(opts);
  if (refused) {
    usageError(refused);
    return;
  }
  opts.profile ||= opts.profileDir !== undefined;
  const command = `${invoke}${args.length > 0 && def.script ? ' --' : ''}${args.length > 0 ? ` ${args.join(' ')}` : ''}`;

  runBenchmark(async () => {
    const cpus = availableParallelism(); // before pinning: afterwards it counts the one core left to this process
    if (opts.pin) opts.pin = canPin();
    if (opts.pin && def.pin === 'self') pinSelf(1);
    const work = mkdtempSync(
      join(tmpdir(), `millrace-${(def.script ?? basename(file, '.ts')).replace('bench:', '')}-`),
    );
    if (!opts.keep) scratch.add(work);
    const startedAt = new Date();
    const loadStart = loadavg();
    const title = typeof def.title === 'function' ? def.title(opts) : def.title;
    say(
      `Millrace ${title}, ${startedAt.toISOString()}, ${machine(cpus, loadStart)}`,
      `command: ${command}`,
      ...(opts.keep ? [`data kept in ${work}`] : []),
    );
    try {
      const out = await def.run({ opts, cpus, work, apiKey: `bench_${randomBytes(16).toString('hex')}` });
      const verdict = out.meets === undefined ? '' : out.meets ? ': MEETS TARGET' : ': BELOW TARGET';
      say('', `loadavg at the end ${loadText()}`, `SUMMARY ${out.summary}${verdict}`);
      writeResults(opts.json, { command, startedAt, cpus, loadStart }, opts, {
        ...out.results,
        ...(out.meets !== undefined ? { meetsTarget: out.meets } : {}),
        summary: out.summary,
      });
      if (out.failure) {
        process.stderr.write(`\nbenchmark FAILED: ${out.failure}\n`);
        return 1;
      }
      return opts.check && out.meets === false ? 2 : 0;
    } finally {
      await stopAll();
      if (!opts.keep) {
        rmSync(work, { recursive: true, force: true });
        scratch.delete(work);
      }
    }
  });
}
