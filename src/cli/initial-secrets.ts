import { randomBytes } from 'node:crypto';
import { chmod, open, rename, rm } from 'node:fs/promises';
import type { FirstStartCredentials } from '../services/bootstrap.ts';

/**
 * What the first start tells about the administrator it created. Printed on stdout by default, where a log
 * collector keeps it; with `--initial-secrets FILE` the secrets go to FILE instead and stdout names only the file.
 */
export function firstStartLines(creds: FirstStartCredentials, secretsFile?: string): string[] {
  const lines = [`First start: administrator "${creds.user}" created.`];
  if (!creds.password && !creds.apiKey) return lines;
  if (secretsFile) {
    const what = [creds.password ? 'password' : '', creds.apiKey ? 'API key' : ''].filter(Boolean).join(' and ');
    const verb = creds.password && creds.apiKey ? 'are' : 'is';
    lines.push(`  Its generated ${what} ${verb} in ${secretsFile} (mode 0600), and nowhere else.`);
    return lines;
  }
  if (creds.password) lines.push(`  password: ${creds.password}`);
  if (creds.apiKey) lines.push(`  API key:  ${creds.apiKey}`);
  lines.push('  These are shown only once; keep them somewhere safe.');
  return lines;
}

/**
 * The file of `--initial-secrets`: shell assignments (`set -a; . FILE; set +a` exports them), the names the README's
 * examples and `millrace` commands read. The generated values are base64url, so they need no quoting.
 */
export function initialSecretsText(creds: FirstStartCredentials): string {
  const lines = [`# Millrace: the administrator "${creds.user}" created on the first start. Keep this file safe.`];
  if (creds.password) lines.push(`MILLRACE_ADMIN_PASSWORD=${creds.password}`);
  if (creds.apiKey) lines.push(`MILLRACE_API_KEY=${creds.apiKey}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the secrets with mode 0600 from the first byte: to a new file beside FILE, renamed over it, so neither a
 * looser mode of an existing FILE nor a half-written file is ever seen.
 */
export async function writeInitialSecrets(path: string, creds: FirstStartCredentials): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    // The umask may have narrowed the mode further, never widened it; set it exactly all the same.
    await chmod(temp, 0o600);
    await handle.writeFile(initialSecretsText(creds));
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(temp, path);
}
