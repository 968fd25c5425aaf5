import type { Engine } from '../engine/engine.ts';
import { SYSTEM_SERVER } from '../domain/job.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { businessKey, type ParsedKey, parseKey } from '../model/keys.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';

export const PROCESS_SERVER_ACTIONS = ['start', 'stop', 'restart'] as const;
export type ProcessServerAction = (typeof PROCESS_SERVER_ACTIONS)[number];

/**
 * The checks of an action that need no body (docs/architecture.md §10): View on the process server's partition
 * (else 404), Control (else 403). The JSON interface runs them before it reads a body, and the action again.
 */
export function authorizeProcessServerAction(principal: Principal, pathKey: string, action: string): ParsedKey {
  const parsed = parseKey('partitioned', pathKey);
  if (!parsed || !can(principal, 'ProcessServer', parsed.partition, 'View'))
    throw notFound('ProcessServer', parsed?.key ?? pathKey);
  if (!can(principal, 'ProcessServer', parsed.partition, 'Control'))
    throw forbidden(`You need the Control privilege to ${action} ${businessKey('ProcessServer', parsed.key)}`);
  return parsed;
}

/**
 * start, stop and restart of a process server. Stop: nothing new is dispatched to it and its
 * running jobs finish (ShuttingDown, then Shutdown); start: dispatch resumes; restart: both.
 */
export async function processServerAction(
  deps: { store: Store; engine: Engine },
  principal: Principal,
  pathKey: string,
  action: ProcessServerAction,
): Promise<void> {
  const parsed = authorizeProcessServerAction(principal, pathKey, action);
  if (parsed.key === SYSTEM_SERVER && action === 'stop')
    throw conflict("GLOBAL.System runs the server's own jobs and cannot be stopped");
  await deps.store.transaction(async (tx) => {
    const ps = await tx.getObject('ProcessServer', parsed.key);
    if (!ps) throw notFound('ProcessServer', parsed.key);
    await tx.patchObjectData(ps.uniqueId, { ...ps.data, DesiredStatus: action === 'stop' ? 'Shutdown' : 'Running' });
  });
  await deps.engine.refreshServers();
  deps.engine.requestDispatch();
}
