import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Key, type Keyring, newKey, parseKeyring, readKeyring, toKey } from './keyring.ts';
import { itemAt } from '../domain/item-at.ts';
import { errorCode } from '../errors.ts';

/** The key file in the data folder. */
export const keyFile = (dataDir: string): string => join(dataDir, 'secret.key');

/** What opens sealed secrets (the dispatcher needs no more). */
export interface SecretOpener {
  decrypt(sealed: string): string;
}

/**
 * Encrypts write-only secrets (credential passwords, agent secrets) with AES-256-GCM. The keys live outside the
 * database: in MILLRACE_SECRET_KEY or in `<data>/secret.key` (created with mode 0600 on first use), as a keyring
 * (keyring.ts) whose first key seals.
 *
 * Sealed forms: `v2:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts), and `v1:<iv>:<tag>:<ciphertext>` from
 * before keys had ids, which every key of the ring is tried on (GCM's tag tells the right one).
 *
 * A key rotation (`millrace secrets rotate`) changes the key file while servers run. A box that read its keys from
 * the file re-reads it when it meets a key id it does not know, and before it seals when the file has changed: a
 * running server opens what the rotation re-sealed and seals with the new key as soon as it is current.
 */
export class SecretBox implements SecretOpener {
  private ring: Keyring;
  private readonly file: string | undefined;
  /** The key file's identity when it was read (inode, size, mtime): a change means a rotation step. */
  private stamp = '';

  constructor(keys: Buffer | Keyring, file?: string) {
    this.ring = Buffer.isBuffer(keys) ? [toKey(keys)] : keys;
    if (this.ring.length === 0) throw new Error('no secret key');
    this.file = file;
  }

  /** From MILLRACE_SECRET_KEY when set, else from the data folder's key file (made on first use). */
  static load(dataDir: string, fromEnv = process.env.MILLRACE_SECRET_KEY): SecretBox {
    if (fromEnv) return new SecretBox(parseKeyring(fromEnv));
    const file = keyFile(dataDir);
    if (!existsSync(file)) {
      try {
        writeFileSync(file, `${newKey().key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
        chmodSync(file, 0o600);
      } catch (err) {
        // Another process made it first: use theirs.
        if (errorCode(err) !== 'EEXIST') throw err;
      }
    }
    const stamp = stampOf(file);
    const box = new SecretBox(readKeyring(file), file);
    box.stamp = stamp;
    return box;
  }

  /** The id of the key that seals. */
  get currentKeyId(): string {
    this.refresh(false);
    return this.current().id;
  }

  /** Every key id this box can open (current first). */
  keyIds(): string[] {
    return this.ring.map((k) => k.id);
  }

  encrypt(plain: string): string {
    this.refresh(false);
    return seal(this.current(), plain);
  }

  decrypt(sealed: string): string {
    try {
      return open(this.ring, sealed);
    } catch (err) {
      // Sealed with a key added since this box read the file (a rotation in progress): read it again.
      if (!this.refresh(true)) throw err;
      return open(this.ring, sealed);
    }
  }

  private current(): Key {
    return itemAt(this.ring, 0);
  }

  /** Re-reads the key file when it changed (or, `force`, in any case); true when the ring was read again. */
  private refresh(force: boolean): boolean {
    if (!this.file) return false;
    const stamp = stampOf(this.file);
    if (!force && stamp === this.stamp) return false;
    try {
      this.ring = readKeyring(this.file);
      this.stamp = stamp;
      return true;
    } catch {
      return false; // torn or missing for a moment: keep the keys known (the file is replaced by rename)
    }
  }
}

/** Seals with one key, naming it. */
export function seal(key: Key, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [
    'v2',
    key.id,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ct.toString('base64url'),
  ].join(':');
}

/** The id of the key a value was sealed with; undefined for a v1 value (no id) or what is not a sealed value. */
export function sealedKeyId(sealed: string): string | undefined {
  const parts = sealed.split(':');
  return parts[0] === 'v2' && parts.length === 5 ? parts[1] : undefined;
}

/** Opens a sealed value with the ring's keys. Throws when it is not a sealed value or no key opens it. */
export function open(ring: Keyring, sealed: string): string {
  const parts = sealed.split(':');
  if (parts[0] === 'v2' && parts.length === 5) {
    const key = ring.find((k) => k.id === parts[1]);
    if (!key) throw new Error(`sealed with key ${parts[1]}, which is not in the keyring`);
    return openWith(key, itemAt(parts, 2), itemAt(parts, 3), itemAt(parts, 4));
  }
  if (parts[0] === 'v1' && parts.length === 4) {
    for (const key of ring) {
      try {
        return openWith(key, itemAt(parts, 1), itemAt(parts, 2), itemAt(parts, 3));
      } catch {
        // not this key
      }
    }
    throw new Error('no key of the keyring opens this value');
  }
  throw new Error('not a sealed secret');
}

function openWith(key: Key, iv: string, tag: string, ct: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

function stampOf(file: string): string {
  try {
    const st = statSync(file, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return '';
  }
}
