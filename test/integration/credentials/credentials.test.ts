import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../../../src/security/secret-box.ts';
import { backends } from '../../helpers/backends.ts';
import { assertError } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { placesHolding, storedPlaces } from '../../helpers/stored-bytes.ts';

/** Credentials through the JSON interface: the password is write-only, stored encrypted, never shown. */
for (const backend of backends()) {
  describe(`credentials (${backend.name})`, () => {
    let t: TestServer;
    const pw = `Pw-${randomBytes(12).toString('hex')}`;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    /** The stored Password of a credential, opened with the server's key file. */
    const storedPassword = async (key: string) => {
      const sealed = (await t.server.store.getObject('Credential', key))?.data.Password as string;
      return { sealed, plain: SecretBox.load(t.config.dataDir, undefined).decrypt(sealed) };
    };

    test('POST, GET, PUT and DELETE never show Password; PUT without it keeps it', async () => {
      const body = { RealUser: 'dbuser', Password: pw, Endpoint: 'db.example.com', VirtualUser: 'DbOwner' };
      const created = await t.req('POST', '/Credential/GLOBAL.Db', { body });
      assert.equal(created.status, 201, created.body);
      assert.equal('Password' in created.json, false);
      assert.equal(created.json.RealUser, 'dbuser');
      assert.equal(created.json.VirtualUser, 'DbOwner');
      const got = await t.req('GET', '/Credential/GLOBAL.Db');
      assert.equal(got.status, 200);
      assert.equal('Password' in got.json, false);
      for (const r of [created, got]) assert.equal(r.body.includes(pw), false);
      assert.equal((await storedPassword('GLOBAL.Db')).plain, pw);

      const changed = await t.req('PUT', '/Credential/GLOBAL.Db', { body: { Password: `${pw}-2` } });
      assert.equal(changed.status, 200, changed.body);
      assert.equal('Password' in changed.json, false);
      assert.equal((await storedPassword('GLOBAL.Db')).plain, `${pw}-2`);
      const kept = await t.req('PUT', '/Credential/GLOBAL.Db', { body: { Endpoint: 'db2.example.com' } });
      assert.equal(kept.status, 200, kept.body);
      assert.equal((await storedPassword('GLOBAL.Db')).plain, `${pw}-2`);

      assert.equal((await t.req('DELETE', '/Credential/GLOBAL.Db')).status, 204);
      assert.equal((await t.req('GET', '/Credential/GLOBAL.Db')).status, 404);
    });

    test('the clear password is nowhere in the database (every row of every table, the files on disk)', async () => {
      for (const name of ['A', 'B', 'C'])
        assert.equal(
          (await t.req('POST', `/Credential/GLOBAL.Scan${name}`, { body: { RealUser: name, Password: pw } })).status,
          201,
        );
      const { sealed } = await storedPassword('GLOBAL.ScanA');
      assert.match(sealed, /^v2:[0-9a-f]{12}:/);
      const places = await storedPlaces(t);
      assert.ok(
        places.some((p) => p.bytes.includes(Buffer.from(sealed))),
        'the scan reads the stored objects',
      );
      assert.deepEqual(await placesHolding(t, pw), []);
    });

    test('a definition naming a credential by key needs it to exist, and to be visible when in another partition', async () => {
      assert.equal((await t.req('POST', '/Partition/Team')).status, 201);
      assert.equal((await t.req('POST', '/Partition/Other')).status, 201);
      const cred = await t.req('POST', '/Credential/Other.Secret', { body: { RealUser: 'x', Password: pw } });
      assert.equal(cred.status, 201, cred.body);
      const define = (name: string, credential: string, key?: string) =>
        t.req('POST', `/JobDefinition/Team.${name}`, {
          body: { JobDefinitionType: 'BASH', Script: 'true', Credential: credential },
          ...(key ? { key } : {}),
        });
      assertError(
        await define('Typo', 'Other.Secrte'),
        400,
        'Field "Credential": Credential:Other.Secrte does not exist',
      );
      assertError(await define('Bad', 'a.b.c'), 400, /neither a Credential key/);
      // A VirtualUser is resolved when a job starts (a job that finds none ends in Error).
      assert.equal((await define('Virtual', 'NoSuchVirtualUser')).status, 201);

      const teamOnly = await t.keyWithGrants('team-author', [
        '*:Team:View,Create,Edit',
        'Queue:GLOBAL:View',
        'Partition:*:View',
      ]);
      assertError(
        await define('Hidden', 'Other.Secret', teamOnly),
        400,
        'Field "Credential": Credential:Other.Secret does not exist',
      );
      const viewer = await t.keyWithGrants('team-viewer', [
        '*:Team:View,Create,Edit',
        'Credential:Other:View',
        'Queue:GLOBAL:View',
        'Partition:*:View',
      ]);
      assert.equal((await define('Visible', 'Other.Secret', viewer)).status, 201);
      // A credential of the definition's own partition or GLOBAL needs no further privilege.
      assert.equal(
        (await t.req('POST', '/Credential/Team.Own', { body: { RealUser: 'x', Password: pw } })).status,
        201,
      );
      assert.equal((await define('Own', 'Team.Own', teamOnly)).status, 201);
    });
  });
}
