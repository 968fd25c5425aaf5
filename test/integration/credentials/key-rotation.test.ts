import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { newKey, parseKeyring, readKeyring, writeKeyring } from '../../../src/security/keyring.ts';
import { keyFile, SecretBox, sealedKeyId } from '../../../src/security/secret-box.ts';
import { secretFields } from '../../../src/services/secret-rotation.ts';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** `millrace secrets rotate` against a running server's database, with the key in the data folder or in the environment. */
for (const backend of backends()) {
  describe(`secret key rotation (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      for (const [key, pw] of [
        ['GLOBAL.One', 'first'],
        ['GLOBAL.Two', 'second'],
      ])
        assert.equal(
          (await t.req('POST', `/Credential/${key}`, { body: { RealUser: 'u', Password: pw } })).status,
          201,
        );
    });
    after(() => t.close());

    const db = () => (t.config.databaseUrl ? ['--database', t.config.databaseUrl] : []);
    const sealed = async (key: string) => (await t.server.store.getObject('Credential', key))?.data.Password as string;

    test('the secret fields come from the registry', () => {
      const byType = [...secretFields()].sort((a, b) => a.type.localeCompare(b.type));
      assert.deepEqual(byType, [
        { type: 'Credential', fields: ['Password'] },
        { type: 'ProcessServer', fields: ['AgentSecret'] },
      ]);
    });

    test('key file: values from before key ids and an interrupted earlier rotation are cleaned up too', async () => {
      // A value sealed the way the server did before keys had ids, with the key file's (then only) key.
      const [current] = readKeyring(keyFile(t.config.dataDir));
      assert.ok(current);
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', current.key, iv);
      const ct = Buffer.concat([c.update('legacy', 'utf8'), c.final()]);
      const v1 = ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join(
        ':',
      );
      const two = await t.server.store.getObject('Credential', 'GLOBAL.Two');
      assert.ok(two);
      await t.server.store.patchObjectData(two.uniqueId, { ...two.data, Password: v1 });
      // A key left by a rotation that stopped after its first step.
      writeKeyring(keyFile(t.config.dataDir), [current, newKey()]);

      const r = await runCli(['secrets', 'rotate', '--data', t.config.dataDir, ...db(), '--grace', '0']);
      assert.equal(r.code, 0, r.stderr);
      const ring = readKeyring(keyFile(t.config.dataDir));
      assert.equal(ring.length, 1);
      assert.match(r.stdout, /dropped old keys [0-9a-f]{12}, [0-9a-f]{12}/);
      const box = new SecretBox(ring);
      assert.equal(box.decrypt(await sealed('GLOBAL.One')), 'first');
      assert.equal(box.decrypt(await sealed('GLOBAL.Two')), 'legacy');
      assert.equal(sealedKeyId(await sealed('GLOBAL.Two')), ring[0]?.id);
      assert.equal(readFileSync(keyFile(t.config.dataDir), 'utf8').split('\n').filter(Boolean).length, 1);
    });

    test('MILLRACE_SECRET_KEY: the new key must be given; every secret is re-encrypted with it, and no key is printed', async () => {
      const [current] = readKeyring(keyFile(t.config.dataDir));
      assert.ok(current);
      const env = { MILLRACE_SECRET_KEY: current.key.toString('base64') };
      const refused = await runCli(['secrets', 'rotate', '--data', t.config.dataDir, ...db()], env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /--new-key-env/);

      const next = randomBytes(32).toString('base64');
      const r = await runCli(['secrets', 'rotate', '--data', t.config.dataDir, ...db(), '--new-key-env', 'NEXT_KEY'], {
        ...env,
        NEXT_KEY: next,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /re-encrypted 3 secrets/);
      for (const k of [next, env.MILLRACE_SECRET_KEY]) assert.equal(`${r.stdout}${r.stderr}`.includes(k), false);
      const box = SecretBox.load(t.config.dataDir, next);
      assert.equal(box.decrypt(await sealed('GLOBAL.One')), 'first');
      assert.equal(box.decrypt(await sealed('GLOBAL.Two')), 'legacy');
      // The key file was not touched; a server given both keys (new first) reads everything.
      assert.deepEqual(readKeyring(keyFile(t.config.dataDir)), [current]);
      const both = SecretBox.load(t.config.dataDir, `${next},${env.MILLRACE_SECRET_KEY}`);
      assert.equal(both.currentKeyId, parseKeyring(next)[0]?.id);
      assert.equal(both.decrypt(await sealed('GLOBAL.One')), 'first');
      // Run again: nothing left to do.
      const again = await runCli(
        ['secrets', 'rotate', '--data', t.config.dataDir, ...db(), '--new-key-env', 'NEXT_KEY'],
        {
          ...env,
          NEXT_KEY: next,
        },
      );
      assert.match(again.stdout, /re-encrypted 0 secrets/);
    });
  });
}
