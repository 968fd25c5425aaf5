import { type Kysely, sql } from 'kysely';
import type { AuthFailureStore, FailureWindow } from './auth-failure-store.ts';
import type { Database } from './tables.ts';

const windows = (rows: ReadonlyArray<{ name: string; failures: number | string; window_start: number | string }>) =>
  new Map<string, FailureWindow>(
    rows.map((r) => [r.name, { count: Number(r.failures), start: Number(r.window_start) }]),
  );

/** The AuthFailureStore of one Kysely database; the same SQL on SQLite (3.35+) and PostgreSQL. */
export class KyselyAuthFailures implements AuthFailureStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async read(names: readonly string[]): Promise<Map<string, FailureWindow>> {
    if (names.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('auth_failures')
      .select(['name', 'failures', 'window_start'])
      .where('name', 'in', names)
      .execute();
    return windows(rows);
  }

  async add(names: readonly string[], now: number, windowMs: number): Promise<Map<string, FailureWindow>> {
    if (names.length === 0) return new Map();
    // One statement per attempt whatever the nodes do at once: the primary key serialises two nodes counting the
    // same name, and each gets the count after its own.
    const values = sql.join(names.map((n) => sql`(${n}, 1, ${now})`));
    // A window is over a minute after it began, or when it lies more than a minute ahead (a clock set back).
    const ended = sql`(auth_failures.window_start <= ${now - windowMs} or auth_failures.window_start > ${now + windowMs})`;
    const { rows } = await sql<{ name: string; failures: number | string; window_start: number | string }>`
      insert into auth_failures (name, failures, window_start) values ${values}
      on conflict (name) do update set
        failures = case when ${ended} then 1 else auth_failures.failures + 1 end,
        window_start = case when ${ended} then excluded.window_start else auth_failures.window_start end
      returning name, failures, window_start`.execute(this.db);
    return windows(rows);
  }

  async prune(before: number): Promise<void> {
    await this.db.deleteFrom('auth_failures').where('window_start', '<', before).execute();
  }
}
