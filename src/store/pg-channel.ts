import pg from 'pg';
import { pgArray } from './pg-array.ts';
import type { Channel } from './store.ts';

const CHANNEL = 'millrace';
const RECONNECT_MS = 1000;

/**
 * PostgreSQL's LISTEN/NOTIFY as a Channel: one connection of its own listens (a pooled one would be handed to
 * queries), notifications go out through the pool. A lost listening connection is opened again every second until
 * it is back; what was sent meanwhile is lost, so the caller is told to look at the database afresh.
 */
export class PgChannel implements Channel {
  private readonly url: string;
  private readonly pool: pg.Pool;
  private client: pg.Client | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(url: string, pool: pg.Pool) {
    this.url = url;
    this.pool = pool;
  }

  async listen(onMessage: (payload: string) => void, onReconnect: () => void): Promise<void> {
    const open = async (): Promise<void> => {
      const client = new pg.Client({ connectionString: this.url });
      const lost = () => {
        if (this.client !== client) return;
        this.client = undefined;
        client.removeAllListeners('notification');
        client.end().catch(() => {});
        if (!this.closed) this.retry(open, onReconnect);
      };
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', (n) => {
        if (n.channel === CHANNEL && n.payload !== undefined) onMessage(n.payload);
      });
      this.client = client;
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
      } catch (err) {
        lost();
        throw err;
      }
    };
    await open();
  }

  private retry(open: () => Promise<void>, onReconnect: () => void): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      open().then(onReconnect, () => {
        // `lost` scheduled the next try.
      });
    }, RECONNECT_MS);
    this.timer.unref();
  }

  async notify(payloads: readonly string[]): Promise<void> {
    // One transaction, so PostgreSQL delivers its notifications in the order sent (pg_notify, being volatile, is
    // called after the sort), and folds identical payloads into one: only repeated hints could be identical (no two
    // feed events are), and a hint told once is told.
    await this.pool.query('select pg_notify($1, p) from unnest($2::text[]) with ordinality as n(p, i) order by i', [
      CHANNEL,
      pgArray(payloads),
    ]);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
