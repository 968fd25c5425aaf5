// The pool Kysely is given, with each client it hands out wrapped (pg-deferred-begin.ts, pg-prepared.ts, and the
// disk-full watch of open.ts): one wrapper per client, since Kysely keeps its connection object per client.
import type { PostgresPool, PostgresPoolClient } from 'kysely';

export function wrapClients(
  pool: PostgresPool,
  wrap: (client: PostgresPoolClient) => PostgresPoolClient,
): PostgresPool {
  const wrappers = new WeakMap<PostgresPoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
