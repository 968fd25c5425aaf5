import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new API key: 32 random bytes, base64url, behind a readable prefix so leaked keys are easy to grep for. */
export const generateApiKey = (): string => `mr_${randomBytes(32).toString('base64url')}`;

/** Public identifier of a key, shown in listings and used to revoke it. */
export const generateApiKeyId = (): string => randomBytes(6).toString('hex');

/** Keys are stored and looked up as SHA-256: a high-entropy key needs no slow KDF. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** Constant-time comparison of two hex digests of equal length; false (never a throw) otherwise. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
