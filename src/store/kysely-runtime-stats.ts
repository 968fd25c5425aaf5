import { type Kysely, type NotNull, sql } from 'kysely';
import type { JobData } from '../domain/job.ts';
import {
  contributions,
  placeInBucket,
  RUN_STATUSES,
  type RunContribution,
  type RunStatus,
  rankOf,
} from '../domain/runtime-figures.ts';
import { type FinishedRun, type RuntimeStats, type RuntimeStatsStore, stepName } from './runtime-stats-store.ts';
import type { Database } from './tables.ts';

const n = (v: number | string | bigint) => Number(v);

/** The percentiles read, and where they go. */
const PERCENTILES = [
  [50, 'p50Ms'],
  [95, 'p95Ms'],
] as const;

/** The RuntimeStatsStore of one Kysely database or transaction; the same SQL on SQLite (3.35+) and PostgreSQL. */
export class KyselyRuntimeStats implements RuntimeStatsStore {
  private readonly db: Kysely<Database>;
  private readonly dialect: 'sqlite' | 'postgres';

  constructor(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
    this.db = db;
    this.dialect = dialect;
  }

  async record(runs: readonly RunContribution[]): Promise<void> {
    if (runs.length === 0) return;
    const { aggregates, buckets } = contributions(runs);
    // One row per key in each statement (PostgreSQL refuses to update a row twice in one upsert), in key order, so
    // two nodes adding to the same rows lock them in the same order.
    const greatest = this.dialect === 'postgres' ? 'greatest' : 'max';
    const least = this.dialect === 'postgres' ? 'least' : 'min';
    await sql`
      insert into runtime_stats (definition, step, runs, completed, error, killed, unknown, total_ms, max_ms)
      values ${sql.join(
        aggregates.map(
          (a) =>
            sql`(${a.definition}, ${a.step}, ${a.runs}, ${a.completed}, ${a.error}, ${a.killed}, ${a.unknown}, ${a.totalMs}, ${a.maxMs})`,
        ),
      )}
      on conflict (definition, step) do update set
        runs = runtime_stats.runs + excluded.runs,
        completed = runtime_stats.completed + excluded.completed,
        error = runtime_stats.error + excluded.error,
        killed = runtime_stats.killed + excluded.killed,
        unknown = runtime_stats.unknown + excluded.unknown,
        total_ms = runtime_stats.total_ms + excluded.total_ms,
        max_ms = ${sql.raw(greatest)}(runtime_stats.max_ms, excluded.max_ms)`.execute(this.db);
    await sql`
      insert into runtime_buckets (definition, step, bucket, runs, min_ms, max_ms)
      values ${sql.join(buckets.map((b) => sql`(${b.definition}, ${b.step}, ${b.bucket}, ${b.runs}, ${b.minMs}, ${b.maxMs})`))}
      on conflict (definition, step, bucket) do update set
        runs = runtime_buckets.runs + excluded.runs,
        min_ms = ${sql.raw(least)}(runtime_buckets.min_ms, excluded.min_ms),
        max_ms = ${sql.raw(greatest)}(runtime_buckets.max_ms, excluded.max_ms)`.execute(this.db);
  }

  async read(definitions: readonly string[]): Promise<Map<string, RuntimeStats[]>> {
    const out = new Map<string, RuntimeStats[]>();
    if (definitions.length === 0) return out;
    // By primary key prefix: a definition's rows whatever the length of its history.
    const rows = await this.db.selectFrom('runtime_stats').selectAll().where('definition', 'in', definitions).execute();
    const byKey = new Map<string, RuntimeStats>();
    for (const r of rows) {
      const stats: RuntimeStats = {
        step: r.step,
        aggregate: {
          runs: n(r.runs),
          completed: n(r.completed),
          error: n(r.error),
          killed: n(r.killed),
          unknown: n(r.unknown),
          totalMs: n(r.total_ms),
          maxMs: n(r.max_ms),
        },
        p50Ms: undefined,
        p95Ms: undefined,
      };
      byKey.set(JSON.stringify([r.definition, r.step]), stats);
      const list = out.get(r.definition) ?? [];
      list.push(stats);
      out.set(r.definition, list);
    }
    for (const b of await this.percentileBuckets(definitions)) {
      const stats = byKey.get(JSON.stringify([b.definition, b.step]));
      if (!stats) continue;
      const total = n(b.total);
      const before = n(b.before);
      const bucket = { runs: n(b.runs), minMs: n(b.min_ms), maxMs: n(b.max_ms) };
      for (const [percent, field] of PERCENTILES) {
        const rank = rankOf(total, percent);
        if (rank > before && rank <= before + bucket.runs) stats[field] = placeInBucket(bucket, rank - before);
      }
    }
    return out;
  }

  /**
   * The buckets holding the ranks of P50 and P95 (domain/runtime-figures.ts `quantileMs`, walked in SQL): a running
   * sum of the runs over each row's buckets in order tells which bucket holds rank ⌈p·N/100⌉, so at most two
   * buckets per row come back however many the durations occupy. Integer arithmetic: ⌈x/100⌉ = (x + 99) / 100.
   */
  private percentileBuckets(definitions: readonly string[]) {
    const ranks = PERCENTILES.map(
      ([p]) => sql`(upto >= (total * ${sql.lit(p)} + 99) / 100 and upto - runs < (total * ${sql.lit(p)} + 99) / 100)`,
    );
    return sql<{
      definition: string;
      step: string;
      runs: number;
      min_ms: number;
      max_ms: number;
      before: number;
      total: number;
    }>`
      select definition, step, runs, min_ms, max_ms, upto - runs as before, total from (
        select definition, step, runs, min_ms, max_ms,
          cast(sum(runs) over (partition by definition, step order by bucket) as bigint) as upto,
          cast(sum(runs) over (partition by definition, step) as bigint) as total
        from runtime_buckets where definition in (${sql.join(definitions)})
      ) as running where ${sql.join(ranks, sql` or `)}`
      .execute(this.db)
      .then((r) => r.rows);
  }

  async lastRuns(definition: string, limit: number): Promise<FinishedRun[]> {
    const rows = await this.finished(definition, false, limit)
      .select(['job_id', 'status', 'run_start', 'run_end'])
      .$narrowType<RunColumns>()
      .execute();
    return rows.map((r) => run(r, ''));
  }

  async lastStepRuns(definition: string, limit: number): Promise<FinishedRun[]> {
    const rows = await this.finished(definition, true, limit)
      .select(['job_id', 'status', 'run_start', 'run_end', 'data'])
      .$narrowType<RunColumns>()
      .execute();
    return rows.map((r) => {
      const data: JobData = JSON.parse(r.data);
      return run(r, stepName(data.chain?.step));
    });
  }

  /**
   * A definition's finished runs newest first: index jobs_definition (definition, job_id) read backwards. On SQLite
   * `+status` keeps the planner off the status indexes, which it would otherwise prefer for the equality on status.
   */
  private finished(definition: string, steps: boolean, limit: number) {
    const status = this.dialect === 'sqlite' ? sql<string>`+status` : sql.ref('status');
    return this.db
      .selectFrom('jobs')
      .where('definition', '=', definition)
      .where(status, 'in', [...RUN_STATUSES])
      .where('definition_type', steps ? '=' : '<>', 'JobChainStep')
      .where('run_start', 'is not', null)
      .where('run_end', 'is not', null)
      .orderBy('job_id', 'desc')
      .limit(limit);
  }

  async drop(definition: string): Promise<void> {
    await this.db.deleteFrom('runtime_stats').where('definition', '=', definition).execute();
    await this.db.deleteFrom('runtime_buckets').where('definition', '=', definition).execute();
  }
}

/** What `finished` selects by: a run's status, and both its times set. */
type RunColumns = { status: RunStatus; run_start: NotNull; run_end: NotNull };

const run = (
  r: { job_id: number; status: RunStatus; run_start: number; run_end: number },
  step: string,
): FinishedRun => ({
  jobId: n(r.job_id),
  status: r.status,
  runStart: n(r.run_start),
  runEnd: n(r.run_end),
  step,
});
