// A transaction's BEGIN sent together with its first statement (docs/architecture.md §2): Kysely sends `begin` as a
// statement of its own, a round trip that carries nothing. Held back here, it goes out in one message with the
// transaction's first statement when that statement has no parameters (a simple query may hold several
// statements); a first statement with parameters gets a BEGIN of its own first, as before. A group of submits
// starts with the ids of its jobs and a dispatch pass with its advisory lock, both without parameters, so each of
// their transactions costs one round trip less. pg offers no pipelining to do this below the statement level.
import type { PostgresPool, PostgresQueryResult } from 'kysely';
import { hasParameters, type Query, type Wrapped, wrapClients } from './pg-pool-wrap.ts';

/**
 * What Kysely reads of a statement's answer (the rows, and the count of an INSERT, UPDATE, DELETE or MERGE), for
 * the BEGIN, COMMIT or ROLLBACK that sent nothing.
 */
const nothing = (): Promise<PostgresQueryResult<unknown>> =>
  Promise.resolve({ command: 'SELECT', rowCount: 0, rows: [] });

/** pg answers a simple query of several statements with one result each: Kysely reads the last, its own. */
const last = (result: unknown): unknown => (Array.isArray(result) ? result[result.length - 1] : result);

function deferring(send: Query): Wrapped {
  let pending = false;
  const query = (text: unknown, values?: unknown): unknown => {
    const plain = typeof text === 'string' && !hasParameters(values);
    if (plain && text === 'begin') {
      pending = true;
      return nothing();
    }
    if (!pending) return send(text, values);
    pending = false;
    // A transaction that sent nothing has nothing to end.
    if (plain && (text === 'commit' || text === 'rollback')) return nothing();
    if (plain) return Promise.resolve(send(`begin; ${text}`, [])).then(last);
    // Parameters, or a cursor (answered at once, not by a promise): a BEGIN of its own first. pg runs a client's
    // statements in the order they were given; a BEGIN that fails fails the statement after it too.
    Promise.resolve(send('begin', [])).catch(() => {});
    return send(text, values);
  };
  return {
    query,
    released: () => {
      pending = false;
    },
  };
}

/** `pool` with every client's BEGIN held back until the transaction's first statement. */
export const deferredBegin = (pool: PostgresPool): PostgresPool => wrapClients(pool, deferring);
