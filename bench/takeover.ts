/**
 * Takeover: three `millrace serve` nodes and one agent on one throwaway PostgreSQL cluster, on this
 * machine. Each round kills one node with SIGKILL and starts it again:
 *
 * - odd rounds kill the timer owner: the time until another node holds the timer lease (docs/architecture.md §16),
 *   and how late the first occurrence of a recurrence every 2 s that was due after the kill started (its RunStart −
 *   its requested start: recurrences fire from whichever node wakes first, so the kill should not delay them);
 * - even rounds kill the node holding the agent's connection: the time until the agent is connected to another.
 *
 *   npm run bench:takeover                     # 10 rounds of each, lease 10 s (the default)
 *   npm run bench:takeover -- --rounds 3 --lease 3
 *
 * Read from the database (cluster_leases, agent_presence, jobs), polled every 20 ms.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort, ROOT } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { count, type Values } from './lib/options.ts';
import { fixed, int, median, say } from './lib/report.ts';

const OPTIONS = {
  rounds: count(10, 'kills of each kind (timer owner, agent node)'),
  lease: count(10, "the nodes' --timer-lease in seconds"),
};
type Options = Values<typeof OPTIONS>;
const NODES = ['n1', 'n2', 'n3'];

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

benchmark({
  script: 'bench:takeover',
  title: 'Takeover of timers and agents when a server node dies',
  about: 'Three nodes on one PostgreSQL database; SIGKILL of the timer owner and of the node holding the agent.',
  options: OPTIONS,
  async run({ opts, work, apiKey }) {
    const o = opts as Options & typeof opts;
    const pgDir = mkdtempSync(join(tmpdir(), 'millrace-takeover-pg-'));
    const script = join(ROOT, 'scripts/pg-cluster.sh');
    const admin = execFileSync('bash', [script, 'start', pgDir], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop() as string;
    const procs = new Map<string, ChildProcess>();
    const ports = new Map<string, number>();
    const sql = new pg.Client({ connectionString: admin });
    try {
      await sql.connect();
      const secretKey = randomBytes(32).toString('base64');
      const start = async (n: string) => {
        const child = spawn(
          process.execPath,
          [
            'bin/millrace',
            'serve',
            '--data',
            join(work, n),
            '--port',
            String(ports.get(n)),
            '--database',
            admin,
            '--no-local-agent',
            '--node-id',
            n,
            '--timer-lease',
            String(o.lease),
          ],
          {
            cwd: ROOT,
            stdio: 'ignore',
            env: {
              ...process.env,
              MILLRACE_ADMIN_API_KEY: apiKey,
              MILLRACE_SECRET_KEY: secretKey,
              MILLRACE_LOG_LEVEL: 'warn',
            },
          },
        );
        procs.set(n, child);
        await until(
          `${n} serving`,
          async () =>
            (await fetch(`http://127.0.0.1:${ports.get(n)}/health/ready`).then(
              (r) => r.status,
              () => 0,
            )) === 200
              ? true
              : undefined,
          180_000,
        );
      };
      const kill = async (n: string) => {
        const child = procs.get(n);
        if (!child) return;
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
        procs.delete(n);
      };
      for (const n of NODES) {
        mkdirSync(join(work, n));
        ports.set(n, await freePort());
        await start(n);
      }
      const api = (path: string, body: unknown) =>
        fetch(
          `http://127.0.0.1:${ports.get('n1')}/millrace/api-extension/External/Vendor/Vendor_RestService/rest/v1${path}`,
          {
            method: 'POST',
            headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
          },
        ).then(async (r) => {
          if (r.status !== 201) throw new Error(`${path}: ${r.status} ${await r.text()}`);
          return (await r.json()) as { jobId?: number };
        });
      const secret = 'takeover-agent-secret-0123456789';
      await api('/ProcessServer/GLOBAL.A1', { DefinitionTypes: ['BASH'], AgentSecret: secret, AgentTimeout: 60 });
      writeFileSync(join(work, 'secret'), `${secret}\n`, { mode: 0o600 });
      const agent = spawn(
        process.execPath,
        [
          'bin/millrace',
          'agent',
          '--server',
          NODES.map((n) => `http://127.0.0.1:${ports.get(n)}/millrace`).join(','),
          '--process-server',
          'GLOBAL.A1',
          '--secret-file',
          join(work, 'secret'),
          '--data',
          join(work, 'agent'),
        ],
        { cwd: ROOT, stdio: 'ignore' },
      );
      procs.set('agent', agent);
      await api('/SubmitFrame/GLOBAL.EveryTwo', { CronExpression: '*/2 * * * * *', TimeZone: 'UTC' });
      const first = await api('/Job/GLOBAL.System_Sleep', {
        SubmitFrame: 'GLOBAL.EveryTwo',
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
      });
      const owner = async () =>
        (
          await sql.query<{ holder: string; expires_at: string }>(
            "select holder, expires_at from cluster_leases where name = 'timers'",
          )
        ).rows.find((r) => Number(r.expires_at) > Date.now())?.holder;
      const agentNode = async () =>
        (await sql.query<{ node_id: string }>("select node_id from agent_presence where process_server = 'GLOBAL.A1'"))
          .rows[0]?.node_id;
      await until('the agent connected', agentNode, 60_000);
      const lease: number[] = [];
      const late: number[] = [];
      const reconnect: number[] = [];
      say(`lease ${o.lease} s; rounds of each kind: ${o.rounds}`, '');
      for (let round = 1; round <= 2 * o.rounds; round++) {
        const ownerRound = round % 2 === 1;
        const victim = (
          ownerRound ? await until('an owner', owner, 60_000) : await until('agent', agentNode, 60_000)
        ) as string;
        const killedAt = Date.now();
        await kill(victim);
        if (ownerRound) {
          await until('a new owner', async () => (((await owner()) ?? victim) !== victim ? true : undefined), 120_000);
          lease.push(Date.now() - killedAt);
          const next = await until(
            'an occurrence due after the kill, started',
            async () =>
              (
                await sql.query<{ requested_start: string; run_start: string | null }>(
                  'select requested_start, run_start from jobs where job_group = $1 and requested_start > $2 and run_start is not null order by requested_start limit 1',
                  [first.jobId, killedAt],
                )
              ).rows[0],
            60_000,
          );
          late.push(Number(next.run_start) - Number(next.requested_start));
          say(
            `round ${round}: killed owner ${victim}; lease taken over after ${int(lease.at(-1) as number)} ms; next occurrence started ${int(late.at(-1) as number)} ms after its time`,
          );
        } else {
          await until(
            'the agent elsewhere',
            async () => (((await agentNode()) ?? victim) !== victim ? true : undefined),
            60_000,
          );
          reconnect.push(Date.now() - killedAt);
          say(
            `round ${round}: killed ${victim}, the agent's node; reconnected elsewhere after ${int(reconnect.at(-1) as number)} ms`,
          );
        }
        await start(victim);
      }
      const m = { lease: median(lease), late: median(late), reconnect: median(reconnect) };
      say(
        '',
        `median lease takeover ${int(m.lease)} ms (lease ${o.lease} s), median lateness of the next occurrence ${int(m.late)} ms, ` +
          `median agent reconnection ${int(m.reconnect)} ms`,
      );
      return {
        summary:
          `takeover (${o.rounds} of each, lease ${o.lease} s): timer lease ${fixed(m.lease / 1000, 2)} s, next recurrence ` +
          `late by ${int(m.late)} ms, agent reconnected in ${int(m.reconnect)} ms (medians)`,
        meets: m.lease < o.lease * 1000 + 2000,
        results: { lease, late, reconnect },
      };
    } finally {
      for (const p of procs.values()) p.kill('SIGKILL');
      await sql.end().catch(() => {});
      execFileSync('bash', [script, 'stop', pgDir], { stdio: 'ignore' });
    }
  },
});
