// The third step of createServer (main.ts): the first start's admin and built-in objects, and the local
// agent's secret (docs/architecture.md §16).
import type { Config } from '../config/config.ts';
import { ensureLocalSecret, LOCAL_SERVER, writeLocalSecret } from '../engine/local-agent.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { ensureBuiltinObjects, type FirstStartCredentials, initialiseAdmin } from '../services/bootstrap.ts';
import type { Store } from '../store/store.ts';
import type { ServerCore } from './core-services.ts';
import type { ServerBase } from './open-data.ts';

/** The first start's admin, the built-in objects, and whether this node's local agent is the one that serves. */
export async function bootstrap(
  config: Config,
  base: ServerBase,
  core: ServerCore,
): Promise<{ firstStart: FirstStartCredentials | undefined; localAgentElsewhere: string | undefined }> {
  const { store, secrets } = base;
  const firstStart = await initialiseAdmin(store, core.accounts, base.env);
  await ensureBuiltinObjects(store, core.objects);
  // One agent serves a process server at a time (docs/architecture.md §16): beside a live node whose agent serves GLOBAL.Local, this
  // node starts none, and leaves the secret that agent proves alone.
  const localAgentElsewhere = config.localAgent ? await core.cluster.heldElsewhere(LOCAL_SERVER) : undefined;
  if (localAgentElsewhere === undefined) await sealLocalSecret(store, secrets, config.dataDir);
  return { firstStart, localAgentElsewhere };
}

/**
 * GLOBAL.Local's AgentSecret is the local agent's secret file; set (encrypted) when it differs. On PostgreSQL the
 * nodes share it instead: a node whose data folder has another takes the database's (when its key opens it), so
 * that no node's start locks out the agent another node's start sealed (docs/architecture.md §16).
 */
async function sealLocalSecret(store: Store, secrets: SecretBox, dataDir: string): Promise<void> {
  const ps = await store.getObject('ProcessServer', LOCAL_SERVER);
  const secret = ensureLocalSecret(dataDir);
  if (!ps) return;
  const sealed = ps.data.AgentSecret;
  const current = typeof sealed === 'string' ? safeDecrypt(secrets, sealed) : undefined;
  if (current === secret) return;
  if (current !== undefined && store.dialect === 'postgres') {
    writeLocalSecret(dataDir, current);
    return;
  }
  await store.patchObjectData(ps.uniqueId, { ...ps.data, AgentSecret: secrets.encrypt(secret) });
}

function safeDecrypt(secrets: SecretBox, sealed: string): string | undefined {
  try {
    return secrets.decrypt(sealed);
  } catch {
    return undefined;
  }
}
