/**
 * Signed CARs (docs/architecture.md §14). A signed archive carries META-INF/SIGNATURE.xml: the SHA-256 digest of every
 * other entry and an Ed25519 signature over that list, so adding, removing or changing any entry breaks it.
 * The signed message is the UTF-8 text of `<sha256 hex>  <entry name>\n` lines sorted by name (byte order),
 * the format of `sha256sum`, so an operator can check the digests with standard tools.
 */
import { Buffer } from 'node:buffer';
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';
import type { Stats } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { itemAt } from '../domain/item-at.ts';
import { errorCode, invalid, unprocessable } from '../errors.ts';
import type { CarEntry } from './archive.ts';
import { compareNames } from './entry-names.ts';

export const SIGNATURE_ENTRY = 'META-INF/SIGNATURE.xml';

export interface TrustedKey {
  keyId: string;
  key: KeyObject;
  /** Where the key came from (a file path), for messages. */
  source: string;
}

interface Digest {
  name: string;
  sha256: string;
}

/** First 32 hex characters of SHA-256 over the public key's SPKI DER: short enough to read, long enough to be unique. */
export function keyIdOf(publicKey: KeyObject): string {
  const key = publicKey.type === 'private' ? createPublicKey(publicKey) : publicKey;
  const der = key.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex').slice(0, 32);
}

export function generateSigningKey(): { privateKeyPem: string; publicKeyPem: string; keyId: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyId: keyIdOf(publicKey),
  };
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

function message(digests: readonly Digest[]): Buffer {
  return Buffer.from(digests.map((d) => `${d.sha256}  ${d.name}\n`).join(''), 'utf8');
}

/** The digests of every entry but the signature, sorted by name; the same name twice cannot be signed. */
function digestsOf(entries: readonly CarEntry[]): Digest[] {
  const digests = entries
    .filter((e) => e.name !== SIGNATURE_ENTRY)
    .map((e) => ({ name: e.name, sha256: e.sha256 ?? sha256(e.data) }))
    .sort((a, b) => compareNames(a.name, b.name));
  for (let i = 1; i < digests.length; i++)
    if (digests[i]?.name === digests[i - 1]?.name)
      throw unprocessable(`the archive holds entry ${JSON.stringify(digests[i]?.name)} twice`);
  return digests;
}

const escapeAttribute = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Returns the entries plus META-INF/SIGNATURE.xml (replacing an existing one). */
export function signEntries(entries: readonly CarEntry[], privateKeyPem: string): CarEntry[] {
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch (err) {
    throw invalid(`the signing key is not a readable private key: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw invalid('the signing key is not an Ed25519 private key');
  const digests = digestsOf(entries);
  const value = sign(null, message(digests), key).toString('base64');
  const xml = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<signature algorithm="Ed25519" key="${keyIdOf(key)}">`,
    ...digests.map((d) => `  <digest name="${escapeAttribute(d.name)}" sha256="${d.sha256}"/>`),
    `  <value>${value}</value>`,
    '</signature>',
    '',
  ].join('\n');
  return [...entries.filter((e) => e.name !== SIGNATURE_ENTRY), { name: SIGNATURE_ENTRY, data: Buffer.from(xml) }];
}

const malformed = (why: string) => unprocessable(`the CAR signature (${SIGNATURE_ENTRY}) is malformed: ${why}`);

// Exactly the format signEntries writes, with any whitespace between elements. The patterns are linear (no
// nested quantifiers), so a hostile signature entry cannot make them backtrack.
const HEAD = /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*<signature algorithm="([^"]*)" key="([^"]*)">\s*/y;
const DIGEST = /<digest name="([^"<>]*)" sha256="([0-9a-f]{64})"\/>\s*/y;
const TAIL = /<value>([A-Za-z0-9+/]{86}==)<\/value>\s*<\/signature>\s*$/y;
const ENTITY = /&(?:(amp|lt|gt|quot|apos);)?/g;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeAttribute(s: string): string {
  return s.replace(ENTITY, (_, name: string | undefined) => {
    if (!name) throw malformed(`a bare "&" in the entry name ${JSON.stringify(s)}`);
    return ENTITIES[name] as string;
  });
}

function parseSignature(data: Buffer): { keyId: string; digests: Digest[]; value: Buffer } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(data);
  } catch {
    throw malformed('it is not UTF-8');
  }
  HEAD.lastIndex = 0;
  const head = HEAD.exec(text);
  if (!head) throw malformed('it does not start with <?xml …?> and <signature algorithm="…" key="…">');
  if (head[1] !== 'Ed25519') throw malformed(`unsupported algorithm ${JSON.stringify(head[1])}; only Ed25519 is`);
  const keyId = itemAt(head, 2);
  if (!/^[0-9a-f]{32}$/.test(keyId)) throw malformed(`the key id ${JSON.stringify(keyId)} is not 32 hex digits`);
  const digests: Digest[] = [];
  let at = HEAD.lastIndex;
  for (;;) {
    DIGEST.lastIndex = at;
    const m = DIGEST.exec(text);
    if (!m) break;
    const name = unescapeAttribute(itemAt(m, 1));
    const previous = digests[digests.length - 1];
    if (previous && compareNames(previous.name, name) >= 0)
      throw malformed(`the digests are not sorted by name without repeats (at ${JSON.stringify(name)})`);
    if (name === SIGNATURE_ENTRY) throw malformed('it lists a digest of itself');
    digests.push({ name, sha256: itemAt(m, 2) });
    at = DIGEST.lastIndex;
  }
  TAIL.lastIndex = at;
  const tail = TAIL.exec(text);
  if (!tail) throw malformed(`expected <digest name="…" sha256="…"/> or <value>…</value> at offset ${at}`);
  const value = Buffer.from(itemAt(tail, 1), 'base64');
  if (value.length !== 64) throw malformed('the value is not a 64-byte Ed25519 signature');
  return { keyId, digests, value };
}

/**
 * { signed: false } when there is no signature entry; { signed: true, keyId } when the signature verifies with a
 * trusted key and every digest matches (every entry listed, none missing, none extra). Otherwise 422 with the
 * reason: malformed, untrusted key, signature does not verify, or which entry differs.
 */
export function verifyEntries(
  entries: readonly CarEntry[],
  trusted: readonly TrustedKey[],
): { signed: false } | { signed: true; keyId: string } {
  const entry = entries.find((e) => e.name === SIGNATURE_ENTRY);
  if (!entry) return { signed: false };
  const signature = parseSignature(entry.data);
  const { keyId } = signature;
  const key = trusted.find((t) => t.keyId === keyId);
  if (!key) throw unprocessable(`the CAR is signed by an untrusted key ${keyId}`);
  // The listed digests are what was signed; checking them first tells a forged list from a changed entry.
  let valid: boolean;
  try {
    valid = verify(null, message(signature.digests), key.key, signature.value);
  } catch {
    valid = false;
  }
  if (!valid)
    throw unprocessable(`the CAR signature by key ${keyId} does not verify: the signature entry was altered or forged`);
  const actual = new Map(digestsOf(entries).map((d) => [d.name, d.sha256]));
  for (const d of signature.digests) {
    const found = actual.get(d.name);
    if (found === undefined)
      throw unprocessable(`entry ${JSON.stringify(d.name)} was signed but is missing from the CAR`);
    if (found !== d.sha256) throw unprocessable(`entry ${JSON.stringify(d.name)} was changed after the CAR was signed`);
    actual.delete(d.name);
  }
  const extra = actual.keys().next();
  if (!extra.done) throw unprocessable(`entry ${JSON.stringify(extra.value)} was added after the CAR was signed`);
  return { signed: true, keyId };
}

async function loadKeyFile(file: string): Promise<TrustedKey> {
  const text = await readFile(file, 'utf8');
  // createPublicKey would derive a public key from a private one: a private key here is a mistake to report.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
    throw new Error(`${file} holds a private key: only public keys belong among the trusted keys`);
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch (err) {
    throw new Error(`${file} is not a public key: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`${file} holds a ${key.asymmetricKeyType} key; CAR signatures use Ed25519 keys`);
  return { keyId: keyIdOf(key), key, source: file };
}

/** Every `*.pem`/`*.pub` public key in a folder (missing folder → []), plus single files. */
export async function loadTrustedKeys(paths: readonly string[]): Promise<TrustedKey[]> {
  const files: string[] = [];
  for (const path of paths) {
    let info: Stats;
    try {
      info = await stat(path);
    } catch (err) {
      if (errorCode(err) === 'ENOENT') continue;
      throw err;
    }
    if (!info.isDirectory()) {
      files.push(path);
      continue;
    }
    for (const name of (await readdir(path)).sort()) {
      if (!/\.(pem|pub)$/.test(name)) continue;
      const file = join(path, name);
      if ((await stat(file)).isFile()) files.push(file);
    }
  }
  const keys = new Map<string, TrustedKey>();
  for (const file of files) {
    const key = await loadKeyFile(file);
    if (!keys.has(key.keyId)) keys.set(key.keyId, key);
  }
  return [...keys.values()];
}
