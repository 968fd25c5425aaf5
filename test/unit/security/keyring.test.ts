import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  formatKeyring,
  keyId,
  newKey,
  parseKeyring,
  readKeyring,
  writeKeyring,
} from '../../../src/security/keyring.ts';
import { keyFile, SecretBox, sealedKeyId } from '../../../src/security/secret-box.ts';

/** A value sealed the way the server did before keys had ids: `v1:<iv>:<tag>:<ciphertext>`. */
function sealV1(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
}

describe('secret keys: the keyring', () => {
  const dir = mkdtempSync(join(tmpdir(), 'millrace-keyring-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the one-line file of before, `<id> <base64>` lines and comma-separated `id:base64`', () => {
    const a = newKey();
    const b = newKey();
    const legacy = parseKeyring(`${a.key.toString('base64')}\n`);
    assert.deepEqual(
      legacy.map((k) => k.id),
      [a.id],
    );
    assert.equal(a.id, keyId(a.key));
    assert.deepEqual(
      parseKeyring(formatKeyring([b, a])).map((k) => k.id),
      [b.id, a.id],
    );
    assert.deepEqual(
      parseKeyring(`${b.id}:${b.key.toString('base64')},${a.key.toString('base64')}`).map((k) => k.id),
      [b.id, a.id],
    );
    assert.deepEqual(
      parseKeyring(`# comment\n${a.id} ${a.key.toString('base64')}\n${a.key.toString('base64')}\n`).length,
      1,
    );
  });

  it('refuses a short key, a written id that does not match its key, and an empty ring, without showing a key', () => {
    const a = newKey();
    assert.throws(() => parseKeyring(randomBytes(16).toString('base64')), /32 bytes/);
    assert.throws(() => parseKeyring(`000000000000 ${a.key.toString('base64')}`), /does not match/);
    assert.throws(() => parseKeyring('\n# nothing\n'), /no secret key/);
    try {
      parseKeyring(`000000000000 ${a.key.toString('base64')}`);
    } catch (err) {
      assert.equal(String(err).includes(a.key.toString('base64')), false);
    }
  });

  it('writes the file whole with mode 0600', () => {
    const file = join(dir, 'ring.key');
    const ring = [newKey(), newKey()];
    writeKeyring(file, ring);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readKeyring(file), ring);
  });
});

describe('secret keys: the secret box', () => {
  const dir = mkdtempSync(join(tmpdir(), 'millrace-box-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('seals with the first key, naming it, and opens with any key of the ring; v1 values too', () => {
    const [a, b] = [newKey(), newKey()];
    const box = new SecretBox([a, b]);
    const sealed = box.encrypt('pässwörd');
    assert.equal(sealedKeyId(sealed), a.id);
    assert.equal(box.decrypt(sealed), 'pässwörd');
    assert.equal(new SecretBox([b, a]).decrypt(sealed), 'pässwörd');
    assert.equal(box.decrypt(sealV1(b.key, 'old')), 'old');
    assert.throws(() => new SecretBox([b]).decrypt(sealed), /not in the keyring/);
    assert.throws(() => box.decrypt(sealV1(newKey().key, 'x')), /no key/);
    assert.throws(() => box.decrypt('plain text'), /not a sealed secret/);
  });

  it('makes the key file on first use, and keeps reading the single-line file of before', () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const box = SecretBox.load(data, undefined);
    const text = readFileSync(keyFile(data), 'utf8');
    assert.match(text, /^[A-Za-z0-9+/]{43}=\n$/);
    assert.equal(statSync(keyFile(data)).mode & 0o777, 0o600);
    const legacy = Buffer.from(text.trim(), 'base64');
    assert.equal(box.currentKeyId, keyId(legacy));
    assert.equal(SecretBox.load(data, undefined).decrypt(sealV1(legacy, 'v1 value')), 'v1 value');
  });

  it('takes MILLRACE_SECRET_KEY as one key or a comma-separated ring', () => {
    const [a, b] = [newKey(), newKey()];
    const fromEnv = SecretBox.load(join(dir, 'unused'), `${a.key.toString('base64')},${b.key.toString('base64')}`);
    assert.equal(fromEnv.currentKeyId, a.id);
    assert.equal(fromEnv.decrypt(new SecretBox([b]).encrypt('x')), 'x');
  });

  it('follows the key file as a rotation changes it: a new key id is read on demand, a new current key before sealing', () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const old = newKey();
    writeKeyring(keyFile(data), [old]);
    const running = SecretBox.load(data, undefined);
    const next = newKey();
    // Step 1–2 of a rotation: the new key joins (not current) and values are sealed with it.
    writeKeyring(keyFile(data), [old, next]);
    assert.equal(running.decrypt(new SecretBox([next]).encrypt('re-sealed')), 're-sealed');
    assert.equal(sealedKeyId(running.encrypt('x')), old.id);
    // Step 3: the new key is current; the running box seals with it from its next value on.
    writeKeyring(keyFile(data), [next, old]);
    assert.equal(sealedKeyId(running.encrypt('y')), next.id);
    // Step 5: the old key is dropped; what the new key sealed still opens.
    writeKeyring(keyFile(data), [next]);
    assert.equal(running.decrypt(running.encrypt('z')), 'z');
    writeFileSync(keyFile(data), 'torn');
    assert.equal(running.decrypt(running.encrypt('still')), 'still', 'a torn file leaves the keys known in use');
  });
});
