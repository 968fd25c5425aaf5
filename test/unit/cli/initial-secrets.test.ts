import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { firstStartLines, writeInitialSecrets } from '../../../src/cli/initial-secrets.ts';

const creds = { user: 'admin', password: 'pw-0123456789ab', apiKey: 'mr_key0123456789' };

test('--initial-secrets: the file holds the secrets as shell assignments, mode 0600, over an older looser file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'millrace-initial-secrets-'));
  try {
    const file = join(dir, 'admin.env');
    await writeFile(file, 'old\n', { mode: 0o644 });
    await writeInitialSecrets(file, creds);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const text = await readFile(file, 'utf8');
    assert.match(text, /^MILLRACE_ADMIN_PASSWORD=pw-0123456789ab$/m);
    assert.match(text, /^MILLRACE_API_KEY=mr_key0123456789$/m);
    assert.deepEqual(await readdir(dir), ['admin.env'], 'no temporary file left beside it');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the first start names the file instead of printing the secrets; without it, it prints them', () => {
  const toFile = firstStartLines(creds, '/etc/millrace/admin.env').join('\n');
  assert.match(toFile, /\/etc\/millrace\/admin\.env \(mode 0600\)/);
  assert.ok(!toFile.includes(creds.password) && !toFile.includes(creds.apiKey));
  const printed = firstStartLines(creds).join('\n');
  assert.match(printed, /password: pw-0123456789ab/);
  assert.match(printed, /API key: {2}mr_key0123456789/);
});
