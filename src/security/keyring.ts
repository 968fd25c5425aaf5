import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { itemAt } from '../domain/item-at.ts';

/**
 * The keys secrets are sealed with. The first is current (it seals); the others only open what they sealed, until
 * a rotation has re-sealed everything with the current one (`millrace secrets rotate`).
 *
 * Text form (the file `<data>/secret.key`, or MILLRACE_SECRET_KEY): one key a line (or comma-separated),
 * `<id> <base64 of 32 bytes>`, current first. A bare `<base64>` is a key too: the single line written before key
 * rotation existed. A key's id is derived from the key itself, so the same key has the same id wherever it is given
 * (a key in an environment variable needs no name); a written id is checked against it.
 */
export interface Key {
  id: string;
  key: Buffer;
}

export type Keyring = readonly Key[];

/** 12 hex digits of the key's SHA-256: the id sealed values name it by. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('millrace-secret-key\0').update(key).digest('hex').slice(0, 12);
}

export function newKey(): Key {
  return toKey(randomBytes(32));
}

export function toKey(key: Buffer): Key {
  if (key.length !== 32) throw new Error('a secret key must be 32 bytes (44 characters of base64)');
  return { id: keyId(key), key };
}

/** Reads the text form. Throws, naming the entry (never a key's bytes), when one is malformed. */
export function parseKeyring(text: string): Keyring {
  const entries = text
    .split(/[\n,]/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('#'));
  if (entries.length === 0) throw new Error('no secret key');
  const ring: Key[] = [];
  for (const [i, entry] of entries.entries()) {
    const parts = entry.split(/[\s:]+/);
    const [id, b64] = parts.length === 1 ? [undefined, itemAt(parts, 0)] : [parts[0], itemAt(parts, 1)];
    if (parts.length > 2 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64))
      throw new Error(`secret key ${i + 1} is not <id> <base64>`);
    const key = toKey(Buffer.from(b64, 'base64'));
    if (id !== undefined && id !== key.id) throw new Error(`secret key ${i + 1}: its id ${id} does not match the key`);
    if (!ring.some((k) => k.id === key.id)) ring.push(key);
  }
  return ring;
}

export function formatKeyring(ring: Keyring): string {
  return ring.map((k) => `${k.id} ${k.key.toString('base64')}\n`).join('');
}

/** Reads a key file. */
export function readKeyring(file: string): Keyring {
  return parseKeyring(readFileSync(file, 'utf8'));
}

/**
 * Replaces the key file whole (temporary file, sync, rename, sync of the folder): a crash leaves either the old or
 * the new file, never a torn one. Mode 0600.
 */
export function writeKeyring(file: string, ring: Keyring): void {
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, formatKeyring(ring));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
