import pg from 'pg';

/** The PostgreSQL side of `millrace migrate`: plain statements over one client, no Kysely (tables are generic). */
export class PgTarget {
  private readonly client: pg.Client;

  private constructor(client: pg.Client) {
    this.client = client;
  }

  static async connect(url: string): Promise<PgTarget> {
    // int8 as text: exact for counts and sequence values whatever their size.
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    return new PgTarget(client);
  }

  close(): Promise<void> {
    return this.client.end();
  }

  async columns(table: string): Promise<Set<string>> {
    const r = await this.client.query<{ name: string }>(
      'select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = $1',
      [table],
    );
    return new Set(r.rows.map((row) => row.name));
  }

  async count(table: string): Promise<number> {
    const r = await this.client.query<{ n: string }>(`select count(*) as n from ${ident(table)}`);
    return Number(r.rows[0]?.n ?? 0);
  }

  async meta(name: string): Promise<string | undefined> {
    const r = await this.client.query<{ value: string }>('select value from meta where name = $1', [name]);
    return r.rows[0]?.value;
  }

  /**
   * Inserts rows, leaving out those whose key (or another unique value) is there already: a rerun resumes. Ids are
   * kept also in an identity column a later migration may declare (`overriding system value`).
   */
  async insert(table: string, columns: readonly string[], rows: readonly unknown[][]): Promise<number> {
    if (rows.length === 0) return 0;
    const values: unknown[] = [];
    const tuples = rows.map((row) => {
      const marks = row.map((v) => {
        values.push(v);
        return `$${values.length}`;
      });
      return `(${marks.join(', ')})`;
    });
    const text = `insert into ${ident(table)} (${columns.map(ident).join(', ')}) overriding system value values ${tuples.join(', ')} on conflict do nothing`;
    return (await this.client.query(text, values)).rowCount ?? 0;
  }

  /** Moves a sequence so that its next value follows `value`; refuses a sequence the schema does not have. */
  async setSequence(name: string, value: number): Promise<void> {
    const r = await this.client.query("select 1 from pg_class where relkind = 'S' and relname = $1", [name]);
    if (r.rowCount === 0) throw new Error(`the destination has no sequence ${name}`);
    await this.client.query('select setval($1::regclass, greatest($2::bigint, 1), $3)', [name, value, value >= 1]);
  }

  /** Moves the sequences behind serial columns of `table` past the largest value copied. */
  async followSerials(table: string, columns: readonly string[]): Promise<void> {
    for (const column of columns) {
      const r = await this.client.query<{ seq: string | null }>('select pg_get_serial_sequence($1, $2) as seq', [
        table,
        column,
      ]);
      const seq = r.rows[0]?.seq;
      if (!seq) continue;
      await this.client.query(
        `select setval($1::regclass, m, true) from (select max(${ident(column)}) as m from ${ident(table)}) x where m is not null`,
        [seq],
      );
    }
  }
}

export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
