/**
 * Basic-authentication timing: does a failed login take measurably longer or shorter for a
 * user that exists (wrong password) than for a user that does not? Both are meant to cost one scrypt run and give the
 * same 401 (src/services/auth.ts `authenticateBasic`, src/security/passwords.ts `verifyPassword`).
 *
 *   npm run bench:auth                        # 1,000 samples of each, one request at a time (≈ 3.5 min on 2 cores)
 *   npm run bench:auth -- --samples 200       # quick run (≈ 1 min)
 *   npm run bench:auth -- --json auth.json    # every sample as JSON
 *
 * 1. `millrace serve` on a fresh data folder, pinned to core 0 (its scrypt thread-pool threads too); this process
 *    on core 1. A user is added with `millrace user add <name> --password-stdin --role Viewer`; its right password
 *    must then give 200 on GET /api-rest/version.
 * 2. Failures are rate-limited per client address (authFailuresPerMinute, 20 by default, with no environment
 *    variable to raise it). So every request is sent on a new connection from its own loopback source address
 *    (127.1.x.y, Linux routes all of 127/8 to lo): no address ever fails twice, the server is unchanged, and
 *    every answer must be 401 (a 429 fails the run).
 * 3. --warmup requests of each kind (untimed; the first unknown user also builds the dummy hash), then --samples
 *    pairs: one unknown user (a fresh random name of the known name's length) and one known user with a fresh
 *    random wrong password of the same length, in random order within each pair, --concurrency requests in flight.
 *    Time = request sent → answer read, on the client (what an attacker sees).
 * 4. Report: median, p10, p90, mean of each; difference of medians; Mann–Whitney U (normal approximation with tie
 *    and continuity corrections, two-sided) and a permutation test of the difference of medians; whether either is
 *    significant at 0.01; the Hodges–Lehmann shift with its 99 % interval (how large a difference could be missed).
 * The exit status does not depend on the result.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { DEFAULTS, interfacePaths } from '../src/config/config.ts';
import { processCpuSeconds, ROOT, startServe } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { count } from './lib/options.ts';
import { fixed, int, median, quantile, say, Table } from './lib/report.ts';

const USER = 'bench_timing'; // 12 characters: unknown names get the same length
/** Failed sign-ins a minute the server allows one user name (authFailuresPerMinute, 20), less one for safety. */
const FAILURES_PER_USER = 19;
const PASSWORD_HEX = 8; // random passwords of 16 characters
const ALPHA = 0.01;

// ---------------------------------------------------------------------------------------------------------------
// Requests, each on a new connection from its own loopback address.

/** The i-th source address: 127.1.0.1, 127.1.0.2, … (last octet 1–254), never the same twice in a run. */
function sourceAddress(i: number): string {
  const b = 1 + Math.floor(i / (256 * 254));
  if (b > 254) throw new Error('too many requests for distinct loopback addresses');
  return `127.${b}.${Math.floor(i / 254) % 256}.${1 + (i % 254)}`;
}

interface Answer {
  status: number;
  ms: number;
  challenge: string;
}

function send(url: URL, user: string, password: string, localAddress: string): Promise<Answer> {
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'GET',
        headers: { Authorization: auth },
        localAddress,
        agent: false,
      },
      (r) => {
        r.resume();
        r.on('end', () =>
          res({
            status: r.statusCode ?? 0,
            ms: performance.now() - t0,
            challenge: String(r.headers['www-authenticate'] ?? ''),
          }),
        );
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end();
  });
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

type Kind = 'unknown' | 'known';

interface Sample {
  kind: Kind;
  seq: number;
  ms: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Statistics.

/** erfc(x) with fractional error below 1.2e-7 everywhere (Numerical Recipes' erfcc, Chebyshev fit). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/**
 * Two-sided Mann–Whitney U test of a against b: U of a, z by the normal approximation with the tie correction and a
 * continuity correction, and the common-language effect size P(a > b) + ½ P(a = b).
 */
function mannWhitney(a: readonly number[], b: readonly number[]): { u: number; z: number; p: number; cles: number } {
  const all = [...a.map((v) => ({ v, first: true })), ...b.map((v) => ({ v, first: false }))].sort((x, y) => x.v - y.v);
  const n = all.length;
  let rankSumA = 0;
  let ties = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && all[j + 1]?.v === all[i]?.v) j++;
    const rank = (i + j + 2) / 2;
    const t = j - i + 1;
    ties += t ** 3 - t;
    for (let k = i; k <= j; k++) if (all[k]?.first) rankSumA += rank;
    i = j + 1;
  }
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const mu = (n1 * n2) / 2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1))));
  const d = u - mu;
  const z = sigma > 0 ? (Math.sign(d) * Math.max(0, Math.abs(d) - 0.5)) / sigma : 0;
  return { u, z, p: Math.min(1, erfc(Math.abs(z) / Math.SQRT2)), cles: u / (n1 * n2) };
}

/** mulberry32, so that a run's permutation p-value can be reproduced from its samples. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Two-sided permutation test of |median(a) − median(b)|: p = (hits + 1) / (permutations + 1). */
function permutationMedianTest(a: readonly number[], b: readonly number[], permutations: number): number {
  const observed = Math.abs(median([...a]) - median([...b]));
  const pool = Float64Array.from([...a, ...b]);
  const rand = prng(0x5eed);
  let hits = 0;
  for (let k = 0; k < permutations; k++) {
    // A partial Fisher–Yates shuffle: the first a.length slots become a random subset.
    for (let i = 0; i < a.length; i++) {
      const j = i + Math.floor(rand() * (pool.length - i));
      const x = pool[i] as number;
      pool[i] = pool[j] as number;
      pool[j] = x;
    }
    const left = pool.slice(0, a.length).sort();
    const right = pool.slice(a.length).sort();
    if (Math.abs(sortedMedian(left) - sortedMedian(right)) >= observed - 1e-12) hits++;
  }
  return (hits + 1) / (permutations + 1);
}

/**
 * Hodges–Lehmann estimate of the shift a − b (the median of every pairwise difference) and its distribution-free
 * confidence interval at 1 − alpha from the normal approximation of U: what the data still allows, i.e. how large a
 * difference this run could have missed.
 */
function hodgesLehmann(
  a: readonly number[],
  b: readonly number[],
  z: number,
): { shift: number; lo: number; hi: number } {
  const d = new Float64Array(a.length * b.length);
  let i = 0;
  for (const x of a) for (const y of b) d[i++] = x - y;
  d.sort();
  const n1 = a.length;
  const n2 = b.length;
  const c = Math.max(1, Math.floor((n1 * n2) / 2 - z * Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12)));
  return { shift: sortedMedian(d), lo: d[c - 1] as number, hi: d[d.length - c] as number };
}

/** z of the two-sided 99 % interval. */
const Z_995 = 2.5758293035489;

function sortedMedian(s: Float64Array): number {
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function describe(xs: number[]) {
  return {
    n: xs.length,
    median: median(xs),
    p10: quantile(xs, 0.1),
    p90: quantile(xs, 0.9),
    mean: xs.reduce((s, x) => s + x, 0) / xs.length,
    min: quantile(xs, 0),
    max: quantile(xs, 1),
  };
}

// ---------------------------------------------------------------------------------------------------------------

const table = new Table<ReturnType<typeof describe> & { name: string }>([
  ['401 answer time, ms', 30, (d) => d.name],
  ['n', 6, (d) => int(d.n)],
  ['median', 10, (d) => fixed(d.median, 2)],
  ['p10', 10, (d) => fixed(d.p10, 2)],
  ['p90', 10, (d) => fixed(d.p90, 2)],
  ['mean', 10, (d) => fixed(d.mean, 2)],
]);

benchmark({
  script: 'bench:auth',
  title: 'basic-auth timing (unknown user vs known user with a wrong password)',
  about:
    'Whether a failed basic login tells by its time if the user exists: an unknown user against a known user ' +
    'with a wrong password, interleaved, with a Mann–Whitney test, a permutation test and the Hodges–Lehmann interval.',
  options: {
    samples: count(1000, 'timed requests of each kind', { min: 10 }),
    warmup: count(20, 'untimed requests of each kind first', { min: 0 }),
    concurrency: count(1, "requests in flight (2 puts two scrypt runs on the server's one pinned core)"),
    permutations: count(10_000, 'permutations of the median test', { min: 100 }),
  },
  pin: 'self',
  async run({ opts, work, apiKey }) {
    say(`pinning: ${opts.pin ? 'server (and its thread pool) on core 0; this process on core 1' : 'UNPINNED'}; SQLite`);
    const dataDir = join(work, 'data');
    const serve = await startServe({ pin: opts.pin, dataDir, apiKey, statsFile: join(work, 'stats.ndjson') });

    const password = `pw_${hex(12)}`;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('MILLRACE_')) delete env[k];
    // The server refuses a user name with 429 after FAILURES_PER_USER failures in a minute, whatever the address: the
    // known-user attempts go round enough users that none reaches it, however fast the machine.
    const knownUsers = Array.from({ length: Math.ceil((opts.warmup + opts.samples) / FAILURES_PER_USER) }, (_, i) =>
      i === 0 ? USER : `${USER.slice(0, USER.length - 4)}${String(i).padStart(4, '0')}`,
    );
    for (const name of knownUsers)
      execFileSync(
        process.execPath,
        [join(ROOT, 'bin/millrace'), 'user', 'add', name, '--password-stdin', '--role', 'Viewer', '--data', dataDir],
        { cwd: ROOT, env, input: password, encoding: 'utf8' },
      );
    say(
      `users:   ${knownUsers.length} known users of ${USER.length} characters with one password, the known-user ` +
        `attempts going round them (millrace user add … --password-stdin)`,
    );

    const url = new URL(`${serve.origin}${interfacePaths(DEFAULTS).xmlBase}/version`);
    let addressIndex = 0;
    let knownTries = 0;
    const nextAddress = () => sourceAddress(addressIndex++);
    const ok = await send(url, USER, password, nextAddress());
    if (ok.status !== 200) throw new Error(`the right password of ${USER} got ${ok.status}, not 200`);

    const attempt = async (kind: Kind): Promise<Answer> => {
      const user =
        kind === 'known'
          ? (knownUsers[knownTries++ % knownUsers.length] as string)
          : `u${hex(USER.length)}`.slice(0, USER.length);
      const a = await send(url, user, hex(PASSWORD_HEX), nextAddress());
      if (a.status !== 401)
        throw new Error(
          `${kind} user got ${a.status}, not 401${a.status === 429 ? ' (rate-limited: the source addresses did not separate the requests)' : ''}`,
        );
      if (!a.challenge.startsWith('Basic')) throw new Error(`${kind} user: 401 without a Basic challenge`);
      return a;
    };

    // Untimed warm-up: the first unknown user also builds the dummy hash (a second scrypt run).
    for (let i = 0; i < opts.warmup; i++) {
      await attempt('unknown');
      await attempt('known');
    }

    // Interleaved pairs in random order within each pair, `concurrency` requests in flight.
    const order: Kind[] = [];
    for (let i = 0; i < opts.samples; i++)
      order.push(...((randomBytes(1)[0] ?? 0) & 1 ? (['unknown', 'known'] as const) : (['known', 'unknown'] as const)));
    const samples: Sample[] = [];
    const total = order.length;
    say(
      `timing:  ${int(opts.samples)} samples of each kind, ${opts.warmup} warm-up of each, ${opts.concurrency} in flight, ` +
        `every request a new connection from its own 127.1.x.y address; GET ${url.pathname}`,
      '',
    );
    const cpu0 = processCpuSeconds(serve.proc.pid);
    const t0 = performance.now();
    let next = 0;
    let lastReport = 0;
    const worker = async () => {
      for (let seq = next++; seq < total; seq = next++) {
        const kind = order[seq] as Kind;
        const a = await attempt(kind);
        samples.push({ kind, seq, ms: a.ms });
        const done = samples.length;
        if (done - lastReport >= total / 10 || done === total) {
          lastReport = done;
          const of = (k: Kind) => median(samples.filter((s) => s.kind === k).map((s) => s.ms));
          say(
            `  ${int(done).padStart(6)} / ${int(total)}  ${fixed((performance.now() - t0) / 1000, 0).padStart(4)} s   ` +
              `median so far: unknown ${fixed(of('unknown'), 2)} ms, known ${fixed(of('known'), 2)} ms`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
    const elapsed = (performance.now() - t0) / 1000;
    const serverCpuS = processCpuSeconds(serve.proc.pid) - cpu0;

    const unknown = samples.filter((s) => s.kind === 'unknown').map((s) => s.ms);
    const known = samples.filter((s) => s.kind === 'known').map((s) => s.ms);
    const u = describe(unknown);
    const k = describe(known);
    const diff = k.median - u.median;
    const mw = mannWhitney(known, unknown);
    const perm = permutationMedianTest(known, unknown, opts.permutations);
    const hl = hodgesLehmann(known, unknown, Z_995);
    const significant = mw.p < ALPHA || perm < ALPHA;
    const pText = (p: number) => (p < 1e-4 ? p.toExponential(1) : p.toFixed(4));
    say(
      '',
      table.header(),
      table.line({ name: 'unknown user', ...u }),
      table.line({ name: 'known user, wrong password', ...k }),
      `difference of medians (known − unknown): ${fixed(diff, 3)} ms (${fixed((100 * diff) / u.median, 2)} % of the unknown median)`,
      `Mann–Whitney U (known vs unknown): U = ${int(mw.u)}, z = ${fixed(mw.z, 2)}, two-sided p = ${pText(mw.p)}; ` +
        `P(known > unknown) = ${fixed(mw.cles, 3)}`,
      `permutation test of the difference of medians (${int(opts.permutations)} permutations): p = ${pText(perm)}`,
      `Hodges–Lehmann shift (known − unknown): ${fixed(hl.shift, 3)} ms, 99 % confidence interval ` +
        `[${fixed(hl.lo, 3)}, ${fixed(hl.hi, 3)}] ms`,
      `at α = ${ALPHA}: ${significant ? 'SIGNIFICANT — the two failures can be told apart by time' : 'not significant — no measurable difference'}`,
      `run: ${int(total)} timed requests in ${fixed(elapsed, 0)} s (${fixed(total / elapsed, 1)} req/s); server CPU ` +
        `${fixed((1000 * serverCpuS) / total, 1)} ms per request`,
    );
    return {
      summary:
        `basic-auth timing, ${int(opts.samples)} + ${int(opts.samples)} samples: unknown user median ` +
        `${fixed(u.median, 2)} ms (p10 ${fixed(u.p10, 2)}, p90 ${fixed(u.p90, 2)}), known user + wrong password median ` +
        `${fixed(k.median, 2)} ms (p10 ${fixed(k.p10, 2)}, p90 ${fixed(k.p90, 2)}); difference ${fixed(diff, 3)} ms ` +
        `(HL shift ${fixed(hl.shift, 2)} ms, 99 % CI ${fixed(hl.lo, 2)} to ${fixed(hl.hi, 2)}); ` +
        `Mann–Whitney p = ${pText(mw.p)}, permutation p = ${pText(perm)}: ${significant ? 'SIGNIFICANT' : 'not significant'} at ${ALPHA}`,
      results: {
        unknown: u,
        known: k,
        differenceOfMediansMs: diff,
        mannWhitney: mw,
        permutationP: perm,
        hodgesLehmann: hl,
        significantAt001: significant,
        elapsedS: elapsed,
        serverCpuS,
        samples,
      },
    };
  },
});
