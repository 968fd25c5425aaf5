import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Encrypts write-only secrets (credential passwords) with AES-256-GCM. The key lives outside the database:
 * in MILLRACE_SECRET_KEY (base64, 32 bytes) or in `<data>/secret.key`, created with mode 0600 on first use.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.key = key;
  }

  static load(dataDir: string, fromEnv = process.env.MILLRACE_SECRET_KEY): SecretBox {
    if (fromEnv) return new SecretBox(Buffer.from(fromEnv, 'base64'));
    const file = join(dataDir, 'secret.key');
    if (!existsSync(file)) {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      chmodSync(file, 0o600);
    }
    return new SecretBox(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
  }

  /** `v1:<iv>:<tag>:<ciphertext>`, base64url parts. */
  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
  }

  decrypt(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}
