import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt: (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer> = promisify(scryptCb);

// N=2^15, r=8, p=1 costs about 100 ms here: slow enough against guessing, and basic auth caches successes.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEYLEN = 32;
const maxmem = 64 * 1024 * 1024;

/** `scrypt$N$r$p$salt$hash`, base64url parts, so the cost can change without breaking stored hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEYLEN, { N, r: R, p: P, maxmem });
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

// A well-formed hash of a random password, verified when the user is unknown so timing tells nothing.
let dummy: Promise<string> | undefined;

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (stored === null && dummy === undefined) dummy = hashPassword(randomBytes(16).toString('hex'));
  const encoded = stored ?? (await (dummy as Promise<string>));
  const [scheme, n, r, p, salt, hash] = encoded.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem,
  });
  return timingSafeEqual(actual, expected) && stored !== null;
}
