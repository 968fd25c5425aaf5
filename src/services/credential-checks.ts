import { businessKey, parseKey } from '../model/keys.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';

/**
 * A JobDefinition's `Credential` (and an HTTP or SQL definition's `Http.Credential` or `Sql.Credential`, which its
 * jobs run with instead), checked when the definition is stored.
 *
 * - A key (`<partition>.<name>`) must name an existing Credential: a typo shows now, not when a job fails. Jobs of
 *   the definition get its password, so naming a credential of another partition than the definition's own or
 *   GLOBAL (which serves every partition) needs the View privilege on it; without it the answer is the same
 *   "does not exist" as for a missing one.
 * - A bare name is a VirtualUser (or a GLOBAL credential's name): each environment maps it to its own credential and
 *   may create that later, so it is resolved when a job starts, in the definition's partition and GLOBAL; a job
 *   that finds none ends in Error with a note.
 */
export async function checkCredentialUse(
  tx: Store,
  data: Record<string, unknown>,
  principal: Principal | undefined,
): Promise<string | undefined> {
  for (const [field, holder] of [
    ['Credential', data],
    ['Http.Credential', data.Http],
    ['Sql.Credential', data.Sql],
  ] as const) {
    if (typeof holder !== 'object' || holder === null) continue;
    const problem = await checkOne(tx, field, 'Credential' in holder ? holder.Credential : undefined, data, principal);
    if (problem) return problem;
  }
  return undefined;
}

async function checkOne(
  tx: Store,
  field: string,
  name: unknown,
  data: Record<string, unknown>,
  principal: Principal | undefined,
): Promise<string | undefined> {
  if (typeof name !== 'string' || name === '') return undefined;
  const key = parseKey('partitioned', name);
  if (!key) return `Field "${field}": "${name}" is neither a Credential key <partition>.<name> nor a VirtualUser name`;
  if (!name.includes('.')) return undefined;
  const shared = key.partition === data.Partition || key.partition === 'GLOBAL';
  const visible = shared || !principal || can(principal, 'Credential', key.partition, 'View');
  if (visible && (await tx.getObject('Credential', key.key))) return undefined;
  return `Field "${field}": ${businessKey('Credential', key.key)} does not exist`;
}
