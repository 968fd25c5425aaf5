import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ensureLocalSecret } from '../../../src/engine/local-agent.ts';
import { readKeyring } from '../../../src/security/keyring.ts';
import { keyFile, SecretBox, sealedKeyId } from '../../../src/security/secret-box.ts';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitForJob } from '../../helpers/wait.ts';

/**
 * Jobs that run with a credential, through the real local agent: the script gets CREDENTIAL_USER and
 * CREDENTIAL_PASSWORD, its output files show the password masked, a missing credential ends the job in Error, and a
 * key rotation through the CLI leaves all of it working.
 */
for (const backend of backends()) {
  describe(`jobs with a credential (${backend.name})`, () => {
    let t: TestServer;
    const get = (path: string) => t.req('GET', path);
    const hex = randomBytes(6).toString('hex');
    const pw = `pä55 wörd-${hex}`;
    const teamPw = `team-${hex}-€`;
    before(async () => {
      t = await startE2eServer(backend);
      for (const p of ['Team', 'Lonely']) assert.equal((await t.req('POST', `/Partition/${p}`)).status, 201);
      const credentials: Array<[string, Record<string, unknown>]> = [
        ['GLOBAL.Db', { RealUser: 'dbuser', Password: pw, VirtualUser: 'DbOwner' }],
        ['Team.TeamDb', { RealUser: 'teamuser', Password: teamPw, VirtualUser: 'DbOwner' }],
      ];
      for (const [key, body] of credentials) {
        const r = await t.req('POST', `/Credential/${key}`, { body });
        assert.equal(r.status, 201, r.body);
      }
    });
    after(() => t.close());

    const define = async (key: string, credential: string, script: string) => {
      const r = await t.req('POST', `/JobDefinition/${key}`, {
        body: { JobDefinitionType: 'BASH', Script: script, Credential: credential },
      });
      assert.equal(r.status, 201, r.body);
    };
    const run = async (key: string) => {
      const r = await t.req('POST', `/Job/${key}`, { body: {} });
      assert.equal(r.status, 201, r.body);
      return waitForJob(get, r.json.jobId);
    };
    // biome-ignore lint/suspicious/noExplicitAny: a job as a client reads it
    const file = async (job: any, name: string): Promise<string> => {
      const f = job.JobFiles.find((x: { Name: string }) => x.Name === name);
      assert.ok(f, `${name} of Job:${job.jobId}`);
      const r = await t.req('GET', `/JobFile/${f.uniqueId}/content`);
      assert.equal(r.status, 200);
      return r.body;
    };
    const checks = (user: string, password: string) =>
      [
        'env',
        'echo "pw=$CREDENTIAL_PASSWORD"',
        'echo "user=$CREDENTIAL_USER"',
        'echo "err $CREDENTIAL_PASSWORD" >&2',
        `[ "$CREDENTIAL_USER" = "${user}" ] && [ "$CREDENTIAL_PASSWORD" = "${password}" ]`,
      ].join('\n');

    /** Runs the definition; asserts the job passed its checks and its output shows the password only masked. */
    const runsWith = async (key: string, user: string, password: string) => {
      const job = await run(key);
      assert.equal(job.Status, 'Completed', JSON.stringify(job.JobNotes));
      const stdout = await file(job, 'stdout.log');
      assert.match(stdout, /^pw=\*\*\*$/m);
      assert.match(stdout, /^CREDENTIAL_PASSWORD=\*\*\*$/m);
      assert.match(stdout, new RegExp(`^user=${user}$`, 'm'));
      assert.match(stdout, new RegExp(`^CREDENTIAL_USER=${user}$`, 'm'));
      assert.equal(stdout.includes(password), false, stdout);
      assert.equal(await file(job, 'stderr.log'), 'err ***\n');
      return job;
    };

    test('a job whose definition names a credential by key gets its user and password; stdout.log shows ***', async () => {
      await define('GLOBAL.ByKey', 'GLOBAL.Db', checks('dbuser', pw));
      await runsWith('GLOBAL.ByKey', 'dbuser', pw);
    });

    test('by VirtualUser: the credential of the job’s partition first, else the GLOBAL one', async () => {
      await define('Team.ByVirtualUser', 'DbOwner', checks('teamuser', teamPw));
      await runsWith('Team.ByVirtualUser', 'teamuser', teamPw);
      await define('Lonely.ByVirtualUser', 'DbOwner', checks('dbuser', pw));
      await runsWith('Lonely.ByVirtualUser', 'dbuser', pw);
    });

    test('a credential that cannot be found or decrypted: the job ends in Error with a note and never runs', async () => {
      await define('GLOBAL.NoCredential', 'NoSuchUser', 'echo ran');
      const missing = await run('GLOBAL.NoCredential');
      assert.equal(missing.Status, 'Error');
      assert.equal(missing.ReturnCode, null);
      assert.deepEqual(missing.JobFiles, []);
      assert.match(missing.JobNotes.join('\n'), /Credential "NoSuchUser" names no Credential/);

      assert.equal(
        (await t.req('POST', '/Credential/GLOBAL.Broken', { body: { RealUser: 'x', Password: 'y' } })).status,
        201,
      );
      const broken = await t.server.store.getObject('Credential', 'GLOBAL.Broken');
      assert.ok(broken);
      await t.server.store.patchObjectData(broken.uniqueId, {
        ...broken.data,
        Password: 'v2:000000000000:aaaa:bbbb:cccc',
      });
      await define('GLOBAL.BrokenCredential', 'GLOBAL.Broken', 'echo ran');
      const job = await run('GLOBAL.BrokenCredential');
      assert.equal(job.Status, 'Error');
      assert.match(job.JobNotes.join('\n'), /password of Credential:GLOBAL\.Broken cannot be decrypted/);
      await t.req('DELETE', '/Credential/GLOBAL.Broken');
    });

    test('after `millrace secrets rotate`, every secret is re-encrypted, the old key is gone, and jobs still get the password', async () => {
      const oldKeys = readKeyring(keyFile(t.config.dataDir));
      const sealedNow = async () => {
        const values = new Map<string, string>();
        for (const key of ['GLOBAL.Db', 'Team.TeamDb'])
          values.set(`Credential:${key}`, (await t.server.store.getObject('Credential', key))?.data.Password ?? '');
        const local = await t.server.store.getObject('ProcessServer', 'GLOBAL.Local');
        values.set('ProcessServer:GLOBAL.Local', local?.data.AgentSecret ?? '');
        return values;
      };
      const before = await sealedNow();
      const db = t.config.databaseUrl ? ['--database', t.config.databaseUrl] : [];
      const r = await runCli(['secrets', 'rotate', '--data', t.config.dataDir, ...db, '--grace', '0']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /re-encrypted 3 secrets with key [0-9a-f]{12}/);

      const newKeys = readKeyring(keyFile(t.config.dataDir));
      assert.equal(newKeys.length, 1, 'the old key was dropped');
      assert.equal(
        oldKeys.some((k) => k.id === newKeys[0]?.id),
        false,
      );
      const withNewKeyOnly = SecretBox.load(t.config.dataDir, undefined);
      for (const [what, sealed] of await sealedNow()) {
        assert.notEqual(sealed, before.get(what), `${what} was re-encrypted`);
        assert.equal(sealedKeyId(sealed), newKeys[0]?.id);
        assert.equal(withNewKeyOnly.decrypt(sealed), new SecretBox(oldKeys).decrypt(before.get(what) as string), what);
      }
      assert.equal(
        withNewKeyOnly.decrypt((await sealedNow()).get('ProcessServer:GLOBAL.Local') as string),
        ensureLocalSecret(t.config.dataDir),
      );

      // The running server follows: jobs get the password, and what it encrypts now uses the new key.
      await runsWith('GLOBAL.ByKey', 'dbuser', pw);
      assert.equal(
        (await t.req('POST', '/Credential/GLOBAL.Later', { body: { RealUser: 'x', Password: 'z' } })).status,
        201,
      );
      const later = (await t.server.store.getObject('Credential', 'GLOBAL.Later'))?.data.Password as string;
      assert.equal(sealedKeyId(later), newKeys[0]?.id);
    });
  });
}
