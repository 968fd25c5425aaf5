import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { RequestContext } from './request-context.ts';
import { csvLine, parseScript } from './sql-text.ts';

/** Rows read from the cursor at a time: the agent holds at most this many of the last statement's rows. */
const BATCH = 1000;
/** How long a cancelled statement may take to end before the agent closes its connection. */
const CANCEL_GRACE_MS = 10_000;

interface SqlSpec {
  Database: string;
  Script: string;
  Transaction: boolean;
}

/**
 * Runs the script's statements in order on PostgreSQL (in one transaction when `Transaction`), `:NAME` bound to
 * the job's parameters. The last statement's rows stream through a cursor into result.csv; ROW_COUNT is how many
 * rows it returned or changed. A kill cancels the running statement on the server (pg_cancel_backend from a second
 * connection), which ends it and rolls the transaction back. The database's error text goes to stderr.log.
 */
export async function runSql(ctx: RequestContext): Promise<number> {
  const spec = ctx.run.request as unknown as SqlSpec;
  const env = ctx.run.env;
  const statements = parseScript(spec.Script, new Set(Object.keys(env)));
  const url = new URL(spec.Database);
  if (ctx.run.auth) {
    url.username = encodeURIComponent(ctx.run.auth.user);
    url.password = encodeURIComponent(ctx.run.auth.password);
  }
  const connectionString = url.toString();
  const client = new pg.Client({ connectionString, application_name: `millrace job ${ctx.run.jobId}` });
  let cutOff: NodeJS.Timeout | undefined;
  const cancel = () => {
    void cancelBackend(connectionString, client);
    // Should the cancel not get through (the database unreachable from a second connection), the job still ends:
    // its connection is closed, which fails the statement on this side.
    cutOff = setTimeout(() => void client.end().catch(() => {}), CANCEL_GRACE_MS);
  };
  ctx.signal.addEventListener('abort', cancel, { once: true });
  let inTransaction = false;
  try {
    await client.connect();
    if (ctx.signal.aborted) return 1;
    if (spec.Transaction) {
      await client.query('BEGIN');
      inTransaction = true;
    }
    for (const [i, s] of statements.entries()) {
      if (ctx.signal.aborted) throw new Error('killed');
      const values = s.names.map((n) => env[n] as string);
      if (i < statements.length - 1) await client.query(s.text, values);
      else ctx.out('ROW_COUNT', String(await toCsv(client, s.text, values, ctx.file('result.csv'))));
    }
    if (inTransaction) await client.query('COMMIT');
    inTransaction = false;
    return 0;
  } catch (err) {
    if (!ctx.signal.aborted) ctx.error(err instanceof Error ? err.message : String(err));
    if (inTransaction) await client.query('ROLLBACK').catch(() => {});
    return 1;
  } finally {
    ctx.signal.removeEventListener('abort', cancel);
    if (cutOff) clearTimeout(cutOff);
    await client.end().catch(() => {});
  }
}

/** Rows of the statement into `file` as CSV (a header line of column names first); returns the row count. */
async function toCsv(client: pg.Client, text: string, values: string[], file: string): Promise<number> {
  const cursor = client.query(new Cursor(text, values));
  const out = createWriteStream(file, { mode: 0o644 });
  const closed = once(out, 'close');
  let rows = 0;
  try {
    for (;;) {
      const batch = await cursor.read(BATCH);
      if (rows === 0) {
        // pg-cursor keeps the statement's result (its fields, and the command's row count) in `_result`.
        const fields = (cursor as unknown as { _result?: { fields?: Array<{ name: string }> } })._result?.fields ?? [];
        if (fields.length > 0) out.write(csvLine(fields.map((f) => f.name)));
      }
      if (batch.length === 0) break;
      rows += batch.length;
      let chunk = '';
      for (const row of batch) chunk += csvLine(Object.values(row));
      if (!out.write(chunk)) await once(out, 'drain');
    }
    const result = (cursor as unknown as { _result?: { rowCount?: number | null; fields?: unknown[] } })._result;
    if (rows === 0 && (result?.fields?.length ?? 0) === 0) rows = result?.rowCount ?? 0;
    // Only a cursor read to its end is closed: after a failed read its close would wait for ever.
    await cursor.close();
  } finally {
    out.end();
    await closed;
  }
  return rows;
}

/** Cancels what `client` runs now, from a second connection (the first one is busy with it). */
async function cancelBackend(connectionString: string, client: pg.Client): Promise<void> {
  const pid = (client as unknown as { processID?: number }).processID;
  if (pid === undefined) return;
  const other = new pg.Client({ connectionString });
  try {
    await other.connect();
    await other.query('SELECT pg_cancel_backend($1)', [pid]);
  } catch {
    // the statement ends anyway when the connection closes
  } finally {
    await other.end().catch(() => {});
  }
}
