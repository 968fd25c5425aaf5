import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CarEntry, readCar } from '../../../src/car/archive.ts';
import { writeCar } from '../../../src/car/archive-writer.ts';
import {
  generateSigningKey,
  keyIdOf,
  loadTrustedKeys,
  SIGNATURE_ENTRY,
  signEntries,
  type TrustedKey,
  verifyEntries,
} from '../../../src/car/signing.ts';
import { MillraceError } from '../../../src/errors.ts';

const entries: CarEntry[] = [
  { name: 'META-INF/export-info.xml', data: Buffer.from('<export-info><user>admin</user></export-info>') },
  { name: 'JobDefinition/GLOBAL.Load.xml', data: Buffer.from('<JobDefinition><Name>Load</Name></JobDefinition>') },
  { name: 'Queue/GLOBAL.A&B "night".xml', data: Buffer.from('<Queue/>') },
  { name: 'Library/GLOBAL.Lib/empty.bin', data: Buffer.alloc(0) },
];

function trustedOf(publicKeyPem: string, source = 'test'): TrustedKey {
  const key = createPublicKey(publicKeyPem);
  return { keyId: keyIdOf(key), key, source };
}

function refused(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof MillraceError, String(err));
    assert.equal(err.status, 422);
    assert.match(err.message, message);
    return true;
  });
}

const signatureText = (signed: readonly CarEntry[]): string =>
  signed.find((e) => e.name === SIGNATURE_ENTRY)?.data.toString('utf8') ?? '';

const withSignature = (signed: readonly CarEntry[], text: string): CarEntry[] =>
  signed.map((e) => (e.name === SIGNATURE_ENTRY ? { name: e.name, data: Buffer.from(text) } : e));

describe('CAR signatures', () => {
  const signer = generateSigningKey();
  const trusted = [trustedOf(signer.publicKeyPem)];
  const signed = signEntries(entries, signer.privateKeyPem);

  it('key ids are the first 32 hex digits of SHA-256 over the SPKI DER', () => {
    const der = createPublicKey(signer.publicKeyPem).export({ type: 'spki', format: 'der' });
    assert.equal(signer.keyId, createHash('sha256').update(der).digest('hex').slice(0, 32));
    assert.match(signer.keyId, /^[0-9a-f]{32}$/);
    assert.notEqual(generateSigningKey().keyId, signer.keyId);
  });

  it('signs every entry and verifies with the trusted key, also after a write and read', async () => {
    assert.equal(signed.length, entries.length + 1);
    const text = signatureText(signed);
    assert.match(
      text,
      new RegExp(
        `^<\\?xml version="1.0" encoding="UTF-8"\\?>\\n<signature algorithm="Ed25519" key="${signer.keyId}">\\n`,
      ),
    );
    assert.match(text, /<digest name="Queue\/GLOBAL\.A&amp;B &quot;night&quot;\.xml" sha256="[0-9a-f]{64}"\/>/);
    const names = [...text.matchAll(/<digest name="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(names, [
      'JobDefinition/GLOBAL.Load.xml',
      'Library/GLOBAL.Lib/empty.bin',
      'META-INF/export-info.xml',
      'Queue/GLOBAL.A&amp;B &quot;night&quot;.xml',
    ]);
    assert.deepEqual(verifyEntries(signed, trusted), { signed: true, keyId: signer.keyId });
    const roundTrip = await readCar(await writeCar(signed));
    assert.deepEqual(verifyEntries(roundTrip, trusted), { signed: true, keyId: signer.keyId });
  });

  it('re-signing replaces the signature', () => {
    const other = generateSigningKey();
    const again = signEntries(signed, other.privateKeyPem);
    assert.equal(again.filter((e) => e.name === SIGNATURE_ENTRY).length, 1);
    assert.deepEqual(verifyEntries(again, [trustedOf(other.publicKeyPem)]), { signed: true, keyId: other.keyId });
  });

  it('an archive without a signature is unsigned', () => {
    assert.deepEqual(verifyEntries(entries, trusted), { signed: false });
  });

  it('refuses a signature by a key that is not trusted, naming the key', () => {
    const stranger = generateSigningKey();
    refused(
      () => verifyEntries(signed, [trustedOf(stranger.publicKeyPem)]),
      new RegExp(`signed by an untrusted key ${signer.keyId}`),
    );
    refused(() => verifyEntries(signed, []), /signed by an untrusted key/);
  });

  it('refuses a changed, an added and a removed entry, naming it', () => {
    const changed = signed.map((e) =>
      e.name === 'JobDefinition/GLOBAL.Load.xml' ? { name: e.name, data: Buffer.from('<JobDefinition/>') } : e,
    );
    refused(
      () => verifyEntries(changed, trusted),
      /"JobDefinition\/GLOBAL\.Load\.xml" was changed after the CAR was signed/,
    );
    const added = [...signed, { name: 'Queue/GLOBAL.Extra.xml', data: Buffer.from('<Queue/>') }];
    refused(() => verifyEntries(added, trusted), /"Queue\/GLOBAL\.Extra\.xml" was added after the CAR was signed/);
    const removed = signed.filter((e) => e.name !== 'Library/GLOBAL.Lib/empty.bin');
    refused(() => verifyEntries(removed, trusted), /"Library\/GLOBAL\.Lib\/empty\.bin" was signed but is missing/);
  });

  it('refuses a digest list changed to match a changed entry: the signature no longer verifies', () => {
    const data = Buffer.from('<JobDefinition><Name>Evil</Name></JobDefinition>');
    const digest = createHash('sha256').update(data).digest('hex');
    const text = signatureText(signed).replace(
      /(<digest name="JobDefinition\/GLOBAL\.Load\.xml" sha256=")[0-9a-f]{64}/,
      `$1${digest}`,
    );
    const forged = withSignature(signed, text).map((e) =>
      e.name === 'JobDefinition/GLOBAL.Load.xml' ? { name: e.name, data } : e,
    );
    refused(() => verifyEntries(forged, trusted), new RegExp(`signature by key ${signer.keyId} does not verify`));
  });

  it('refuses malformed signatures', () => {
    const text = signatureText(signed);
    const cases: Array<[string, RegExp]> = [
      ['', /malformed: it does not start with/],
      ['<signature/>', /malformed/],
      [text.replace('algorithm="Ed25519"', 'algorithm="RSA"'), /unsupported algorithm "RSA"/],
      [text.replace(/key="[0-9a-f]{32}"/, 'key="xyz"'), /key id "xyz" is not 32 hex digits/],
      [text.replace(/<value>[^<]*<\/value>/, '<value>AAAA</value>'), /expected <digest .* or <value>/],
      [text.replace('</signature>', '</signature><extra/>'), /malformed/],
      [text.replace('&amp;', '&'), /a bare "&"/],
      [text.replace(/sha256="[0-9a-f]{64}"/, 'sha256="ABC"'), /malformed/],
      [`<!DOCTYPE x [<!ENTITY e "e">]>${text}`, /malformed/],
    ];
    for (const [bad, message] of cases) refused(() => verifyEntries(withSignature(signed, bad), trusted), message);
    const invalidUtf8 = signed.map((e) =>
      e.name === SIGNATURE_ENTRY ? { name: e.name, data: Buffer.from([0xff]) } : e,
    );
    refused(() => verifyEntries(invalidUtf8, trusted), /not UTF-8/);
  });

  it('refuses a digest list with a repeated or unsorted name', () => {
    const lines = signatureText(signed).split('\n');
    const digests = lines.filter((l) => l.startsWith('  <digest '));
    const swapped = lines.map((l) => (l === digests[0] ? digests[1] : l === digests[1] ? digests[0] : l)).join('\n');
    refused(() => verifyEntries(withSignature(signed, swapped), trusted), /not sorted by name without repeats/);
    const repeated = lines.map((l) => (l === digests[1] ? digests[0] : l)).join('\n');
    refused(() => verifyEntries(withSignature(signed, repeated), trusted), /not sorted by name without repeats/);
  });

  it('signs only with an Ed25519 private key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    assert.throws(() => signEntries(entries, rsa.toString()), /not an Ed25519 private key/);
    assert.throws(() => signEntries(entries, 'nonsense'), /not a readable private key/);
  });
});

describe('CAR signatures: trusted keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'millrace-trusted-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('loads every *.pem and *.pub of a folder and single files; a missing folder gives none', async () => {
    const [a, b, c] = [generateSigningKey(), generateSigningKey(), generateSigningKey()];
    const folder = join(dir, 'keys');
    mkdirSync(folder);
    writeFileSync(join(folder, 'a.pem'), a.publicKeyPem);
    writeFileSync(join(folder, 'b.pub'), b.publicKeyPem);
    writeFileSync(join(folder, 'b-copy.pem'), b.publicKeyPem);
    writeFileSync(join(folder, 'notes.txt'), 'not a key');
    writeFileSync(join(folder, 'a.key'), a.privateKeyPem); // not *.pem/*.pub: ignored
    writeFileSync(join(dir, 'single.key.public'), c.publicKeyPem);
    const keys = await loadTrustedKeys([folder, join(dir, 'single.key.public'), join(dir, 'missing')]);
    assert.deepEqual(keys.map((k) => k.keyId).sort(), [a.keyId, b.keyId, c.keyId].sort());
    assert.equal(keys.find((k) => k.keyId === a.keyId)?.source, join(folder, 'a.pem'));
    assert.deepEqual(await loadTrustedKeys([join(dir, 'missing')]), []);
  });

  it('refuses a private key or a key of another type among the trusted keys', async () => {
    const folder = join(dir, 'bad');
    mkdirSync(folder);
    writeFileSync(join(folder, 'oops.pem'), generateSigningKey().privateKeyPem);
    await assert.rejects(loadTrustedKeys([folder]), /holds a private key/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' });
    writeFileSync(join(dir, 'rsa.pem'), rsa.toString());
    await assert.rejects(loadTrustedKeys([join(dir, 'rsa.pem')]), /holds a rsa key; CAR signatures use Ed25519/);
  });
});
