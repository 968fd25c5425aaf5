import { fieldDefault } from '../model/data.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import type { SecretOpener } from '../security/secret-box.ts';
import { allObjects } from '../store/all-objects.ts';
import type { Store, StoredObject } from '../store/store.ts';

/** A credential a job runs with, opened: what its `run` message carries. */
export interface OpenCredential {
  user: string;
  password: string;
  /** Its Protocol: `bearer` makes an HTTP job send the password as a bearer token. */
  protocol: string;
}

/** Opened, or why not (a job note: it names the credential, never a password). */
export type CredentialLookup = { ok: true; credential: OpenCredential } | { ok: false; note: string };

/** Environment variables a job's credential reaches its script in. */
export const CREDENTIAL_USER = 'CREDENTIAL_USER';
export const CREDENTIAL_PASSWORD = 'CREDENTIAL_PASSWORD';

/**
 * Finds and opens the credentials of the jobs one dispatch pass starts, each credential once per pass. A job's
 * `Credential` names one by key (`<partition>.<name>`, a bare name meaning GLOBAL) or, failing that, by
 * VirtualUser: in the job's partition first, then in GLOBAL (the first by key where several share it), so one
 * definition runs as the right user wherever its partition's credentials say.
 */
export class CredentialResolver {
  private readonly tx: Store;
  private readonly secrets: SecretOpener | undefined;
  private readonly seen = new Map<string, CredentialLookup>();

  constructor(tx: Store, secrets: SecretOpener | undefined) {
    this.tx = tx;
    this.secrets = secrets;
  }

  async lookup(name: string, partition: string): Promise<CredentialLookup> {
    const cacheKey = `${partition}\0${name}`;
    let found = this.seen.get(cacheKey);
    if (!found) {
      found = await this.open(name, partition);
      this.seen.set(cacheKey, found);
    }
    return found;
  }

  private async open(name: string, partition: string): Promise<CredentialLookup> {
    const object = await findCredential(this.tx, name, partition);
    if (!object)
      return {
        ok: false,
        note: `The job did not start: its Credential "${name}" names no Credential, and no Credential of partition ${partition} or GLOBAL has that VirtualUser`,
      };
    const sealed = object.data.Password;
    let password = '';
    if (typeof sealed === 'string') {
      try {
        if (!this.secrets) throw new Error('no key');
        password = this.secrets.decrypt(sealed);
      } catch {
        return {
          ok: false,
          note: `The job did not start: the password of ${businessKey('Credential', object.key)} cannot be decrypted with the server's secret keys`,
        };
      }
    }
    return {
      ok: true,
      credential: {
        user: String(object.data.RealUser ?? ''),
        password,
        protocol: String(object.data.Protocol ?? fieldDefault('Credential', 'Protocol')),
      },
    };
  }
}

/** The Credential `name` refers to from `partition`: by key, else by VirtualUser (own partition, then GLOBAL). */
export async function findCredential(tx: Store, name: string, partition: string): Promise<StoredObject | undefined> {
  const key = parseKey('partitioned', name);
  const byKey = key ? await tx.getObject('Credential', key.key) : undefined;
  if (byKey) return byKey;
  if (name.includes('.')) return undefined; // a key, not a VirtualUser name
  for (const p of partition === 'GLOBAL' ? ['GLOBAL'] : [partition, 'GLOBAL']) {
    const found = await byVirtualUser(tx, name, p);
    if (found) return found;
  }
  return undefined;
}

async function byVirtualUser(tx: Store, virtualUser: string, partition: string): Promise<StoredObject | undefined> {
  for await (const c of allObjects(tx, 'Credential', partition)) if (c.data.VirtualUser === virtualUser) return c;
  return undefined;
}
