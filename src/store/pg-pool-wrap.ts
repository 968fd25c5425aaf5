// The pool Kysely is given, with each client it hands out wrapped (pg-deferred-begin.ts, pg-prepared.ts, and the
// disk-full watch of open.ts): one wrapper per client, since Kysely keeps its connection object per client.
import type { PostgresPool, PostgresPoolClient } from 'kysely';

/**
 * A client's `query` as the wrappers see it: pg's overloads (text and values answered by a promise, a cursor
 * answered at once) taken as one, so that only this file converts between the two.
 */
export type Query = (text: unknown, values?: unknown) => unknown;

/** What a wrapper makes of a client's `query`, and what it does when the client goes back to the pool. */
export interface Wrapped {
  query: Query;
  released?: () => void;
}

/** Whether a statement's values are some (a statement without any may be one of several in a simple query). */
export const hasParameters = (values: unknown): boolean => Array.isArray(values) && values.length > 0;

export function wrapClients(pool: PostgresPool, wrap: (send: Query) => Wrapped): PostgresPool {
  const wrappers = new WeakMap<PostgresPoolClient, PostgresPoolClient>();
  const make = (client: PostgresPoolClient): PostgresPoolClient => {
    const wrapped = wrap(client.query.bind(client) as Query);
    return {
      query: wrapped.query as PostgresPoolClient['query'],
      release: () => {
        wrapped.released?.();
        client.release();
      },
    };
  };
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = make(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
