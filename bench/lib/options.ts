/**
 * A benchmark's options, declared once (name, kind, default, help): node:util parseArgs reads them, and the same
 * declaration gives the `--help` text and the one-line errors. Keys are camelCase; the flag is their kebab-case
 * (`maxLoad` → `--max-load`), a flag that defaults to on is turned off with `--no-<flag>`.
 */
import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';

interface Base {
  help: string;
  /** An environment variable read when the flag is not given. */
  env?: string;
}

export interface NumberSpec<T extends number | undefined = number | undefined> extends Base {
  kind: 'number';
  default: T;
  /** What --help says the default is, when it is computed (e.g. "steps × calls"). */
  defaultText?: string;
  integer: boolean;
  min: number;
  max?: number;
  /** The value's name in --help: N, S, MS… */
  arg: string;
}

export interface TextSpec<T extends string | undefined = string | undefined> extends Base {
  kind: 'text';
  default: T;
  arg: string;
  /** A file or folder: made absolute. */
  path?: boolean;
  pattern?: RegExp;
  /** What a value must be, for the error when `pattern` does not match. */
  expected?: string;
}

export interface FlagSpec extends Base {
  kind: 'flag';
  default: boolean;
  /** A preset: when the flag is given, these become the defaults of other options (explicit values still win). */
  sets?: Record<string, number>;
}

export interface ListSpec<C extends string = string> extends Base {
  kind: 'list';
  choices: readonly C[];
}

export type Spec = NumberSpec | TextSpec | FlagSpec | ListSpec;
export type Specs = Record<string, Spec>;

type ValueOf<S> =
  S extends NumberSpec<infer T>
    ? T extends number
      ? number
      : number | undefined
    : S extends TextSpec<infer T>
      ? T extends string
        ? string
        : string | undefined
      : S extends FlagSpec
        ? boolean
        : S extends ListSpec<infer C>
          ? C[]
          : never;

export type Values<D extends Specs> = { -readonly [K in keyof D]: ValueOf<D[K]> };

type More<S> = Partial<Omit<S, 'kind' | 'default' | 'help'>>;

/** A whole number, at least 1 unless `min` says otherwise. */
export function count<T extends number | undefined>(
  value: T,
  help: string,
  more: More<NumberSpec> = {},
): NumberSpec<T> {
  return { kind: 'number', default: value, help, integer: true, min: 1, arg: 'N', ...more };
}

/** A number (seconds, per cent, a load average), at least 0 unless `min` says otherwise. */
export function amount<T extends number | undefined>(
  value: T,
  help: string,
  more: More<NumberSpec> = {},
): NumberSpec<T> {
  return { kind: 'number', default: value, help, integer: false, min: 0, arg: 'S', ...more };
}

/** Off unless given; `{ default: true }` makes it `--no-<flag>`. */
export function flag(help: string, more: Partial<Omit<FlagSpec, 'kind' | 'help'>> = {}): FlagSpec {
  return { kind: 'flag', default: false, help, ...more };
}

export function text<T extends string | undefined>(value: T, help: string, more: More<TextSpec> = {}): TextSpec<T> {
  return { kind: 'text', default: value, help, arg: 'TEXT', ...more };
}

/** A file or folder, made absolute. */
export function path(help: string, arg = 'FILE'): TextSpec<undefined> {
  return { kind: 'text', default: undefined, help, arg, path: true };
}

/** Comma-separated names out of `choices`. */
export function list<C extends string>(choices: readonly C[], help: string): ListSpec<C> {
  return { kind: 'list', choices, help };
}

/** Options several benchmarks share. */
export const shared = {
  maxBackground: amount(
    25,
    'a repetition is noisy when other processes use more than P % of the machine just before it',
    { arg: 'P', env: 'BENCH_MAX_BACKGROUND' },
  ),
  maxLoad: amount(1.5, 'before each measurement wait until loadavg1 < L and no other benchmark runs', { arg: 'L' }),
  quietTimeout: amount(1800, 'measure anyway after waiting S seconds'),
} as const;

/** A mistake on the command line: one line, exit status 2. */
export class UsageError extends Error {}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function flagText(key: string, s: Spec): string {
  if (s.kind === 'flag') return s.default ? `--no-${kebab(key)}` : `--${kebab(key)}`;
  return `--${kebab(key)} ${s.kind === 'list' ? 'LIST' : s.arg}`;
}

function number(s: NumberSpec, text: string, where: string): number {
  const n = Number(text);
  const what = s.integer ? 'a whole number' : 'a number';
  const range = `>= ${s.min}${s.max !== undefined ? ` and <= ${s.max}` : ''}`;
  if (text.trim() === '' || !Number.isFinite(n) || (s.integer && !Number.isInteger(n)) || n < s.min || n > (s.max ?? n))
    throw new UsageError(`${where}: expected ${what} ${range}, got "${text}"`);
  return n;
}

/** Reads `argv` (and the environment) by `specs`; `undefined` when --help was asked for. */
export function parseOptions<D extends Specs>(
  specs: D,
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Values<D> | undefined {
  const config: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const [key, s] of Object.entries(specs)) config[kebab(key)] = { type: s.kind === 'flag' ? 'boolean' : 'string' };
  let values: Record<string, string | boolean | Array<string | boolean> | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: config, allowNegative: true }));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) return undefined;
  const out: Record<string, unknown> = {};
  const presets: Record<string, number> = {};
  for (const [key, s] of Object.entries(specs))
    if (s.kind === 'flag' && s.sets && values[kebab(key)] === true) Object.assign(presets, s.sets);
  for (const [key, s] of Object.entries(specs)) {
    const flagName = `--${kebab(key)}`;
    const given = values[kebab(key)];
    const fromEnv = s.env !== undefined && env[s.env] !== undefined && env[s.env] !== '' ? env[s.env] : undefined;
    const raw = typeof given === 'string' ? given : fromEnv;
    const where = typeof given === 'string' || fromEnv === undefined ? flagName : (s.env as string);
    if (s.kind === 'flag') out[key] = typeof given === 'boolean' ? given : s.default;
    else if (s.kind === 'number') out[key] = raw === undefined ? (presets[key] ?? s.default) : number(s, raw, where);
    else if (s.kind === 'list') {
      const names = (raw ?? '').split(',').filter((x) => x !== '');
      const bad = names.find((x) => !s.choices.includes(x));
      if (bad !== undefined) throw new UsageError(`${where}: expected ${s.choices.join(' or ')}, got "${bad}"`);
      out[key] = names;
    } else if (raw === undefined) out[key] = s.default;
    else if (s.pattern && !s.pattern.test(raw))
      throw new UsageError(`${where}: expected ${s.expected ?? s.pattern}, got "${raw}"`);
    else out[key] = s.path ? resolve(raw) : raw;
  }
  return out as Values<D>;
}

/** The `--help` text: one line per option with its default and environment variable, wrapped at 120 columns. */
export function usage(command: string, about: string, specs: Specs): string {
  const entries = Object.entries(specs);
  const presetsOf = (key: string) =>
    entries.flatMap(([k, s]) =>
      s.kind === 'flag' && s.sets?.[key] !== undefined ? [`--${kebab(k)} ${s.sets[key]}`] : [],
    );
  const lines = entries.map(([key, s]) => {
    const facts: string[] = [];
    if (s.kind === 'number' && (s.default !== undefined || s.defaultText))
      facts.push(`default ${s.defaultText ?? s.default}`, ...presetsOf(key));
    if (s.kind === 'number' && s.max !== undefined) facts.push(`at most ${s.max}`);
    if (s.kind === 'text' && s.default !== undefined) facts.push(`default ${s.default}`);
    if (s.kind === 'list') facts.push(`any of ${s.choices.join(', ')}`);
    if (s.env) facts.push(`env ${s.env}`);
    return [flagText(key, s), `${s.help}${facts.length ? ` (${facts.join('; ')})` : ''}`] as const;
  });
  lines.push(['-h, --help', 'this text']);
  const width = Math.max(...lines.map(([f]) => f.length)) + 2;
  const wrap = (words: string[], indent: number) => {
    const out: string[] = [];
    for (const w of words) {
      const last = out.at(-1);
      if (last !== undefined && indent + last.length + 1 + w.length <= 120) out[out.length - 1] = `${last} ${w}`;
      else out.push(w);
    }
    return out;
  };
  const body = lines.flatMap(([f, h]) =>
    wrap(h.split(' '), width + 2).map((part, i) => `  ${(i === 0 ? f : '').padEnd(width)}${part}`),
  );
  return [`usage: ${command} [options]`, ...wrap(about.split(' '), 0), '', ...body].join('\n');
}
