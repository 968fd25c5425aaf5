import type { TypeName } from '../model/fields.ts';
import { definitionTypes } from '../model/registry.ts';
import type { Key, Keyring } from '../security/keyring.ts';
import { open, seal, sealedKeyId } from '../security/secret-box.ts';
import { allObjects } from '../store/all-objects.ts';
import type { Store } from '../store/store.ts';

/**
 * Re-sealing the stored secrets with another key: the database half of `millrace secrets rotate` (the key file half
 * is in cli/secrets.ts). The fields come from the registry: every `secret` field of every stored type.
 */

/** Stored types with secret fields, and those fields (ObjectService seals exactly these). */
export function secretFields(): Array<{ type: TypeName; fields: string[] }> {
  return definitionTypes()
    .map((t) => ({ type: t.name, fields: t.fields.filter((f) => f.kind.kind === 'secret').map((f) => f.name) }))
    .filter((t) => t.fields.length > 0);
}

/** Calls `fn` for every stored secret value: its object's id and data, and the field. */
async function eachSecret(
  tx: Store,
  fn: (
    object: { uniqueId: number; key: string; data: Record<string, unknown> },
    type: TypeName,
    field: string,
    sealed: string,
  ) => void,
): Promise<void> {
  for (const { type, fields } of secretFields()) {
    for await (const object of allObjects(tx, type))
      for (const field of fields) {
        const sealed = object.data[field];
        if (typeof sealed === 'string') fn(object, type, field, sealed);
      }
  }
}

/**
 * In one transaction, re-seals with `to` every secret not sealed with it already (so a second run after an
 * interruption finishes the work, and a later run picks up values written with an old key meanwhile). `ring` must
 * open them all: a value no key opens fails the whole transaction, naming the object, and nothing changes.
 * Returns how many values were re-sealed.
 */
export async function resealSecrets(store: Store, ring: Keyring, to: Key): Promise<number> {
  return store.transaction(async (tx) => {
    const changed = new Map<number, Record<string, unknown>>();
    let count = 0;
    await eachSecret(tx, (object, type, field, sealed) => {
      if (sealedKeyId(sealed) === to.id) return;
      let plain: string;
      try {
        plain = open(ring, sealed);
      } catch {
        throw new Error(
          `${type}:${object.key} field ${field} cannot be decrypted with the keys in the keyring; nothing was changed`,
        );
      }
      const data = changed.get(object.uniqueId) ?? { ...object.data };
      data[field] = seal(to, plain);
      changed.set(object.uniqueId, data);
      count++;
    });
    for (const [uniqueId, data] of changed) await tx.patchObjectData(uniqueId, data);
    return count;
  });
}

/** The ids of the keys stored secrets are sealed with; `v1` for values from before keys had ids. */
export async function keyIdsInUse(store: Store): Promise<Set<string>> {
  const used = new Set<string>();
  await eachSecret(store, (_o, _t, _f, sealed) => {
    used.add(sealedKeyId(sealed) ?? 'v1');
  });
  return used;
}
