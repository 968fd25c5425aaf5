import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readCar } from '../../../src/car/archive.ts';
import { writeCar } from '../../../src/car/archive-writer.ts';
import { generateSigningKey, signEntries } from '../../../src/car/signing.ts';
import { parseXml } from '../../../src/car/xml.ts';
import { CarExporter } from '../../../src/services/car-export.ts';
import { SYSTEM_PRINCIPAL } from '../../../src/services/objects.ts';
import { backends } from '../../helpers/backends.ts';
import { getJob, postCreated } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** docs/architecture.md §14; the XML services car and car-put and `POST /Import`: export, import, rule sets, signatures. */

const ZIP = { 'content-type': 'application/zip' };
const jobIdOf = (body: string) => Number(/<job-id>(\d+)<\/job-id>/.exec(body)?.[1]);
const statusOf = (body: string) => /<status>(\w+)<\/status>/.exec(body)?.[1];
const entryNames = async (car: Buffer) => (await readCar(car)).map((e) => e.name);

const queueEntry = (partition: string, name: string, inner = '') => ({
  name: `Queue/${partition}.${name}.xml`,
  data: Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Queue><Name>${name}</Name><Partition type="Partition" path="${partition}"/>${inner}</Queue>`,
  ),
});

for (const backend of backends()) {
  describe(backend.name, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await postCreated(t, '/Partition/DEV', {});
      await postCreated(t, '/Partition/PROD', {});
      await postCreated(t, '/TimeWindow/DEV.Nights', { Description: 'nights' });
      await postCreated(t, '/Queue/DEV.Batch', { ExecutionSize: 3, TimeWindow: 'DEV.Nights', Description: 'batch' });
      await postCreated(t, '/JobDefinition/DEV.Load', {
        JobDefinitionType: 'BASH',
        Script: 'echo load',
        DefaultQueue: 'DEV.Batch',
      });
      await postCreated(t, '/Credential/DEV.Db', { RealUser: 'loader', Password: 'pa55-word-never-exported' });
    });
    after(() => t.close());

    const exportCar = async (path: string) => {
      const res = await t.xml('GET', path);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/zip');
      return res.raw as Buffer;
    };
    const putCar = (car: Buffer, headers: Record<string, string> = {}) =>
      t.xml('PUT', '/car', { payload: car, headers: { ...ZIP, ...headers } });

    test('an export kept packed while planned and one read again when written give the same bytes', async () => {
      const roots = [{ type: 'JobDefinition' as const, key: 'DEV.Load' }];
      const exporter = (packedBudget?: number) =>
        new CarExporter({
          store: t.server.store,
          objects: t.server.objects,
          sourceAddress: 'http://test.invalid',
          ...(packedBudget !== undefined ? { packedBudget } : {}),
        });
      const packed = await exporter().exportMany(SYSTEM_PRINCIPAL, roots, { references: true });
      const reread = await exporter(0).exportMany(SYSTEM_PRINCIPAL, roots, { references: true });
      assert.ok(reread.equals(packed));
      assert.ok((await entryNames(packed)).length >= 4, 'the object and what it refers to');
    });

    test('car exports one object, or with references=true everything it refers to, as the same bytes each time', async () => {
      const one = await exportCar('/car/JobDefinition/DEV.Load');
      assert.deepEqual(await entryNames(one), ['JobDefinition/DEV.Load.xml', 'META-INF/export-info.xml']);
      assert.deepEqual(await exportCar('/car/JobDefinition/DEV.Load'), one, 'deterministic bytes');
      const all = await exportCar('/car/JobDefinition/DEV.Load?references=true');
      assert.deepEqual(await entryNames(all), [
        'JobDefinition/DEV.Load.xml',
        'META-INF/export-info.xml',
        'Partition/DEV.xml',
        'Queue/DEV.Batch.xml',
        'TimeWindow/DEV.Nights.xml',
      ]);
      const info = parseXml((await readCar(all)).find((e) => e.name === 'META-INF/export-info.xml')?.data as Buffer);
      assert.deepEqual(
        info.children.map((c) => c.name),
        ['source-system', 'source-address', 'user', 'date'],
      );
      assert.equal(info.children[2]?.text, 'admin');
      const def = parseXml((await readCar(one))[0]?.data as Buffer);
      assert.equal(def.name, 'JobDefinition');
      assert.equal(def.children.find((c) => c.name === 'Script')?.text, 'echo load');
      assert.equal((await t.xml('GET', '/car/JobDefinition/DEV.Nope')).status, 404);
    });

    test('a credential is exported without its password, and importing it back keeps the stored one', async () => {
      const car = await exportCar('/car/Credential/DEV.Db');
      const bytes = Buffer.concat((await readCar(car)).map((e) => e.data)).toString();
      assert.ok(!bytes.includes('pa55-word'), 'the password must not be in the archive');
      assert.doesNotMatch(bytes, /<Password/);
      const res = await putCar(car);
      assert.equal(statusOf(res.body), 'Completed', res.body);
      const stored = await t.server.store.getObject('Credential', 'DEV.Db');
      assert.equal(typeof stored?.data.Password, 'string', 'the sealed password is kept');
    });

    test('car-put imports as a System_Import_Archive job with a log; the same archive again changes nothing', async () => {
      const car = await exportCar('/car/JobDefinition/DEV.Load?references=true');
      const res = await putCar(car, {
        'X-Vendor-TargetPartition': 'PROD',
        'X-Vendor-FileName': 'dev.car',
        'X-Vendor-Description': 'promote',
      });
      assert.equal(res.status, 200, res.body);
      assert.equal(statusOf(res.body), 'Completed');
      const job = await getJob(t, jobIdOf(res.body));
      assert.equal(job.JobDefinition, 'GLOBAL.System_Import_Archive');
      assert.equal(job.Description, 'promote');
      assert.equal(job.JobParameters.find((p: { Name: string }) => p.Name === 'FileName').InValueString, 'dev.car');
      const log = (await t.xml('GET', `/jobfile/${job.JobFiles[0].uniqueId}`)).body;
      assert.match(log, /created +JobDefinition:PROD\.Load/);
      assert.match(log, /created +Queue:PROD\.Batch/);
      assert.match(log, /created +TimeWindow:PROD\.Nights/);
      assert.match(log, /unchanged Partition:PROD|changed +Partition:PROD/);
      // References to objects that moved with it follow them.
      const moved = await t.req('GET', '/JobDefinition/PROD.Load');
      assert.equal(moved.json.DefaultQueue, 'PROD.Batch');
      assert.equal((await t.req('GET', '/Queue/PROD.Batch')).json.TimeWindow, 'PROD.Nights');
      const again = await putCar(car, { 'X-Vendor-TargetPartition': 'PROD' });
      const log2 = (await t.xml('GET', `/jobfile/${(await getJob(t, jobIdOf(again.body))).JobFiles[0].uniqueId}`)).body;
      assert.doesNotMatch(log2, /^(created|changed) /m);
      assert.match(log2, /unchanged JobDefinition:PROD\.Load/);
    });

    test("an HTTP definition's Headers object goes through a CAR unchanged, odd names included", async () => {
      const headers = JSON.parse('{"Accept": "application/json", "X-Order": "${ORDER}", "constructor": "y"}');
      await postCreated(t, '/JobDefinition/DEV.Call', {
        JobDefinitionType: 'HTTP',
        Http: { Method: 'POST', Url: 'http://127.0.0.1:1/orders', Headers: headers },
      });
      const car = await exportCar('/car/JobDefinition/DEV.Call');
      const entry = (await readCar(car)).find((e) => e.name === 'JobDefinition/DEV.Call.xml');
      assert.ok(entry);
      assert.match(
        entry.data.toString().replace(/>\s+</g, '><'),
        /<Headers><Header name="Accept">application\/json<\/Header><Header name="X-Order">\$\{ORDER\}<\/Header><Header name="constructor">y<\/Header><\/Headers>/,
      );
      const res = await putCar(car, { 'X-Vendor-TargetPartition': 'PROD' });
      assert.equal(res.status, 200, res.body);
      assert.equal(statusOf(res.body), 'Completed');
      const imported = (await t.req('GET', '/JobDefinition/PROD.Call')).json;
      assert.deepEqual(Object.entries(imported.Http.Headers), Object.entries(headers));
      const again = await putCar(car, { 'X-Vendor-TargetPartition': 'PROD' });
      const log = (await t.xml('GET', `/jobfile/${(await getJob(t, jobIdOf(again.body))).JobFiles[0].uniqueId}`)).body;
      assert.match(log, /unchanged JobDefinition:PROD\.Call/);
    });

    test('car-put refuses bad headers and bodies with 400 before any job or archive is stored', async () => {
      const car = await writeCar([queueEntry('GLOBAL', 'BadHeaders')]);
      const jobsBefore = await t.server.store.jobs.listByStatus(['Completed', 'Error'], { limit: 10_000 });
      const cases: Array<[Record<string, string>, Buffer, RegExp]> = [
        [{ async: 'maybe' }, car, /async header must be true or false/],
        [{ 'X-Vendor-Signed-Car': 'yes' }, car, /Signed-Car must be true or false/],
        [{ 'X-Vendor-TargetPartition': 'not a name' }, car, /TargetPartition "not a name" is not a partition name/],
        [{ 'X-Vendor-TargetPartition': 'NoSuchPartition' }, car, /does not exist|refused/],
        [{ 'X-Vendor-FileName': 'x'.repeat(256) }, car, /file name/],
        [{ 'X-Vendor-Description': 'd'.repeat(256) }, car, /description/],
        [{}, Buffer.alloc(0), /empty/],
      ];
      for (const [headers, body, pattern] of cases) {
        const res = await putCar(body, headers);
        if (res.status === 200) assert.fail(`${JSON.stringify(headers)} was accepted: ${res.body}`);
        assert.ok([400, 422].includes(res.status), `${JSON.stringify(headers)}: ${res.status} ${res.body}`);
        assert.match(res.body, pattern, JSON.stringify(headers));
      }
      assert.deepEqual(await t.server.store.blobs.list('archive'), []);
      assert.equal((await t.req('GET', '/Queue/BadHeaders')).status, 404);
      const jobsAfter = await t.server.store.jobs.listByStatus(['Completed', 'Error'], { limit: 10_000 });
      // Only the unknown target partition gets as far as a job (which refuses it); the others never make one.
      assert.equal(jobsAfter.length - jobsBefore.length, 1);
    });

    test('async=true answers once the job is submitted; GET /Job follows it to the end', async () => {
      const car = await writeCar([queueEntry('GLOBAL', 'AsyncQ')]);
      const res = await putCar(car, { async: 'true' });
      assert.equal(res.status, 200, res.body);
      const id = jobIdOf(res.body);
      let job = await getJob(t, id);
      for (let i = 0; i < 100 && job.Status !== 'Completed'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        job = await getJob(t, id);
      }
      assert.equal(job.Status, 'Completed');
      assert.equal((await t.req('GET', '/Queue/AsyncQ')).status, 200);
    });

    test('POST /Import: WaitForCompletion true → 200 on success and 500 on failure; false → 200 once started', async () => {
      const post = (car: Buffer, query: string) =>
        t.req('POST', `/Import${query}`, { payload: car, headers: { 'content-type': 'application/octet-stream' } });
      const ok = await post(
        await writeCar([queueEntry('GLOBAL', 'Imported1')]),
        '?WaitForCompletion=true&fileName=one.car',
      );
      assert.equal(ok.status, 200, ok.body);
      assert.equal(ok.json.Status, 'Completed');
      assert.equal(ok.json.JobDefinition, 'GLOBAL.System_Import_Archive');
      const bad = await post(
        await writeCar([queueEntry('GLOBAL', 'Imported2', '<ExecutionSize>-1</ExecutionSize>')]),
        '?WaitForCompletion=true',
      );
      assert.equal(bad.status, 500, bad.body);
      assert.match(bad.json.message, /Import job \d+ ended Error/);
      assert.equal((await t.req('GET', '/Queue/Imported2')).status, 404);
      const started = await post(
        await writeCar([queueEntry('GLOBAL', 'Imported3')]),
        '?WaitForCompletion=false&TargetPartition=PROD',
      );
      assert.equal(started.status, 200, started.body);
      assert.ok(started.json.jobId > 0);
      const failedLater = await post(await writeCar([queueEntry('GLOBAL', 'Imported4', '<Held>perhaps</Held>')]), '');
      assert.equal(failedLater.status, 200, 'rule 3: started, not necessarily successful');
      assert.equal(
        (
          await t.req('POST', '/Import?Bogus=1', {
            payload: Buffer.from('x'),
            headers: { 'content-type': 'application/octet-stream' },
          })
        ).status,
        400,
      );
      assert.equal(
        (
          await t.req('POST', '/Import?WaitForCompletion=perhaps', {
            payload: Buffer.from('x'),
            headers: { 'content-type': 'application/octet-stream' },
          })
        ).status,
        400,
      );
      assert.equal(
        (
          await t.req('POST', '/Queue/GLOBAL.Imported9', {
            payload: Buffer.from('x'),
            headers: { 'content-type': 'application/octet-stream' },
          })
        ).status,
        415,
      );
    });

    test('all or nothing: one invalid object refuses the whole archive, and the log names it', async () => {
      const car = await writeCar([
        queueEntry('GLOBAL', 'Good1'),
        queueEntry('GLOBAL', 'Good2'),
        queueEntry('GLOBAL', 'Bad', '<HoldLevel>500</HoldLevel>'),
      ]);
      const res = await putCar(car);
      assert.equal(res.status, 422, res.body);
      assert.match(res.body, /Import job (\d+) ended Error/);
      const id = Number(/Import job (\d+)/.exec(res.body)?.[1]);
      const job = await getJob(t, id);
      assert.equal(job.Status, 'Error');
      const log = (await t.xml('GET', `/jobfile/${job.JobFiles[0].uniqueId}`)).body;
      assert.match(log, /refused +Queue:GLOBAL\.Bad: Field "HoldLevel" must be an integer from 1 to 100/);
      for (const name of ['Good1', 'Good2', 'Bad'])
        assert.equal((await t.req('GET', `/Queue/${name}`)).status, 404, name);
      // An entry whose XML names another object than its entry name is refused too.
      const lying = await writeCar([{ name: 'Queue/GLOBAL.Liar.xml', data: queueEntry('GLOBAL', 'Truth').data }]);
      assert.equal((await putCar(lying)).status, 422);
    });

    test('an import rule set maps partitions, includes and excludes, and overrides properties', async () => {
      await postCreated(t, '/Partition/TEST', {});
      await postCreated(t, '/ImportRuleSet/GLOBAL.Promote', {
        PartitionMappings: [{ From: 'DEV', To: 'TEST' }],
        Includes: ['Queue:*', 'TimeWindow:*'],
        Excludes: ['Queue:DEV.Skip*'],
        PropertyOverrides: [
          { TypePattern: 'Queue', Field: 'ExecutionSize', Value: '${slots}' },
          { TypePattern: 'Queue', Field: 'Description', Value: 'promoted by ${who}' },
        ],
      });
      const car = await writeCar([
        queueEntry('DEV', 'Ruled', '<TimeWindow type="TimeWindow" path="DEV.Nights"/>'),
        queueEntry('DEV', 'SkipMe'),
        (await readCar(await exportCar('/car/TimeWindow/DEV.Nights'))).find((e) =>
          e.name.startsWith('TimeWindow/'),
        ) as { name: string; data: Buffer },
        (await readCar(await exportCar('/car/JobDefinition/DEV.Load'))).find((e) =>
          e.name.startsWith('JobDefinition/'),
        ) as { name: string; data: Buffer },
      ]);
      const res = await putCar(car, {
        'X-Vendor-Ruleset': 'GLOBAL.Promote',
        'X-Vendor-Ruleset-Properties': 'slots=7,who=ops',
      });
      assert.equal(statusOf(res.body), 'Completed', res.body);
      const q = (await t.req('GET', '/Queue/TEST.Ruled')).json;
      assert.equal(q.ExecutionSize, 7);
      assert.equal(q.Description, 'promoted by ops');
      assert.equal(q.TimeWindow, 'TEST.Nights');
      assert.equal((await t.req('GET', '/Queue/TEST.SkipMe')).status, 404);
      assert.equal((await t.req('GET', '/JobDefinition/TEST.Load')).status, 404, 'not included');
      const log = (await t.xml('GET', `/jobfile/${(await getJob(t, jobIdOf(res.body))).JobFiles[0].uniqueId}`)).body;
      assert.match(log, /skipped +Queue:DEV\.SkipMe/);
      assert.match(log, /skipped +JobDefinition:DEV\.Load/);
      const missing = await putCar(car, { 'X-Vendor-Ruleset': 'GLOBAL.Nope' });
      assert.equal(missing.status, 400, missing.body);
      const malformed = await putCar(car, {
        'X-Vendor-Ruleset': 'GLOBAL.Promote',
        'X-Vendor-Ruleset-Properties': 'no pair here',
      });
      assert.equal(malformed.status, 400, malformed.body);
    });

    test('signed archives: with X-Vendor-Signed-Car an unsigned or untrusted archive is refused; a trusted one imports', async () => {
      const trusted = generateSigningKey();
      const stranger = generateSigningKey();
      await mkdir(join(t.config.dataDir, 'trusted-keys'), { recursive: true });
      await writeFile(join(t.config.dataDir, 'trusted-keys', 'release.pem'), trusted.publicKeyPem);
      const entries = [queueEntry('GLOBAL', 'Signed')];
      const unsigned = await writeCar(entries);
      const good = await writeCar(signEntries(entries, trusted.privateKeyPem));
      const foreign = await writeCar(signEntries(entries, stranger.privateKeyPem));
      const signed = { 'X-Vendor-Signed-Car': 'true' };
      const r1 = await putCar(unsigned, signed);
      assert.equal(r1.status, 422, r1.body);
      assert.match(r1.body, /not signed/);
      const r2 = await putCar(foreign, signed);
      assert.equal(r2.status, 422, r2.body);
      assert.match(r2.body, /untrusted key/);
      const r3 = await putCar(foreign);
      assert.equal(r3.status, 422, 'a signature that does not verify is refused even when not asked for');
      assert.equal((await t.req('GET', '/Queue/Signed')).status, 404);
      const tampered = await readCar(good);
      const idx = tampered.findIndex((e) => e.name.startsWith('Queue/'));
      tampered[idx] = queueEntry('GLOBAL', 'Signed', '<ExecutionSize>99</ExecutionSize>');
      const r4 = await putCar(await writeCar(tampered), signed);
      assert.equal(r4.status, 422, r4.body);
      const r5 = await putCar(good, signed);
      assert.equal(statusOf(r5.body), 'Completed', r5.body);
      assert.equal((await t.req('GET', '/Queue/Signed')).status, 200);
    });

    test('importing needs the Submit privilege on the import definition, and Create/Edit on the objects', async () => {
      await t.loginWithGrants('viewer', 'viewer-password-1', ['*:*:View']);
      const car = await writeCar([queueEntry('GLOBAL', 'NotYours')]);
      const r1 = await t.xml('PUT', '/car', { payload: car, headers: ZIP, auth: ['viewer', 'viewer-password-1'] });
      assert.equal(r1.status, 403, r1.body);
      await t.loginWithGrants('importer', 'importer-password-1', [
        '*:*:View',
        'JobDefinition:GLOBAL:Submit',
        'Queue:GLOBAL:Submit',
      ]);
      const r2 = await t.xml('PUT', '/car', { payload: car, headers: ZIP, auth: ['importer', 'importer-password-1'] });
      assert.equal(r2.status, 403, r2.body);
      assert.match(r2.body, /Create privilege/);
      assert.equal((await t.req('GET', '/Queue/NotYours')).status, 404);
    });

    test('libraries: jar-put stores a file (a job), api-libs zips them all, scripts-list and scripts-get list and export', async () => {
      await postCreated(t, '/Library/GLOBAL.Tools', { Description: 'shared code' });
      const jar = await writeCar([
        { name: 'META-INF/MANIFEST.MF', data: Buffer.from('Manifest-Version: 1.0\n') },
        { name: 'a/B.class', data: Buffer.from('cafebabe') },
      ]);
      const headers = {
        'content-type': 'application/java-archive',
        'X-Vendor-Library': 'GLOBAL.Tools',
        'X-Vendor-FileName': 'tools.jar',
      };
      assert.equal(
        (await t.xml('PUT', '/jar', { payload: jar, headers: { ...headers, 'X-Vendor-Library': '' } })).status,
        400,
      );
      const noName = { ...headers } as Record<string, string>;
      delete noName['X-Vendor-FileName'];
      assert.match((await t.xml('PUT', '/jar', { payload: jar, headers: noName })).body, /FileName header is required/);
      assert.match(
        (await t.xml('PUT', '/jar', { payload: Buffer.from('not a jar at all, just text'), headers })).body,
        /not a JAR/,
      );
      const broken = await t.xml('PUT', '/jar', {
        payload: Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(40)]),
        headers,
      });
      assert.equal(broken.status, 400, broken.body);
      assert.match(broken.body, /not a readable JAR/);
      const res = await t.xml('PUT', '/jar/', { payload: jar, headers });
      assert.equal(res.status, 200, res.body);
      assert.equal(statusOf(res.body), 'Completed');
      const lib = (await t.req('GET', '/Library/GLOBAL.Tools')).json;
      assert.equal(lib.Files.length, 1);
      assert.deepEqual({ Name: lib.Files[0].Name, Size: lib.Files[0].Size }, { Name: 'tools.jar', Size: jar.length });
      const libs = await readCar((await t.xml('GET', '/api-libs')).raw as Buffer);
      assert.deepEqual(
        libs.map((e) => e.name),
        ['GLOBAL.Tools/tools.jar'],
      );
      assert.deepEqual(libs[0]?.data, jar);
      await postCreated(t, '/JobDefinition/GLOBAL.Script1', { JobDefinitionType: 'PYTHON', Script: 'print(1)' });
      const list = parseXml((await t.xml('GET', '/scripts-list')).body);
      const keys = list.children.map((c) => c.children.find((x) => x.name === 'business-key')?.text);
      assert.ok(keys.includes('Library:GLOBAL.Tools') && keys.includes('JobDefinition:GLOBAL.Script1'), keys.join());
      assert.ok(!keys.includes('JobDefinition:GLOBAL.System_Sleep'), 'System definitions are not scripts');
      for (const method of ['GET', 'POST']) {
        const car = await readCar((await t.xml(method, '/scripts-get')).raw as Buffer);
        const names = car.map((e) => e.name);
        assert.ok(
          names.includes('Library/GLOBAL.Tools.xml') && names.includes('Library/GLOBAL.Tools/tools.jar'),
          names.join(),
        );
        assert.ok(names.includes('JobDefinition/GLOBAL.Script1.xml'));
      }
      // The library travels with its file: import it into another partition.
      const exported = await exportCar('/car/Library/GLOBAL.Tools');
      const moved = await putCar(exported, { 'X-Vendor-TargetPartition': 'PROD' });
      assert.equal(statusOf(moved.body), 'Completed', moved.body);
      assert.equal((await t.req('GET', '/Library/PROD.Tools')).json.Files[0].Name, 'tools.jar');
      // Files is computed from the stored files: a body cannot set it, and deleting the library deletes them.
      await postCreated(t, '/Library/GLOBAL.Gone', { Files: [{ Name: 'fake.jar', Size: 1 }] });
      assert.deepEqual((await t.req('GET', '/Library/GLOBAL.Gone')).json.Files, []);
      await t.xml('PUT', '/jar', { payload: jar, headers: { ...headers, 'X-Vendor-Library': 'GLOBAL.Gone' } });
      assert.equal((await t.req('GET', '/Library/GLOBAL.Gone')).json.Files.length, 1);
      assert.equal((await t.req('DELETE', '/Library/GLOBAL.Gone')).status, 204);
      await postCreated(t, '/Library/GLOBAL.Gone', {});
      assert.deepEqual(
        (await t.req('GET', '/Library/GLOBAL.Gone')).json.Files,
        [],
        'a new library of the same name starts empty',
      );
      assert.ok(
        !(await readCar((await t.xml('GET', '/api-libs')).raw as Buffer)).some((e) =>
          e.name.startsWith('GLOBAL.Gone/'),
        ),
      );
      const missingLib = await t.xml('PUT', '/jar', {
        payload: jar,
        headers: { ...headers, 'X-Vendor-Library': 'GLOBAL.NoSuchLib' },
      });
      assert.equal(missingLib.status, 422, missingLib.body);
      assert.match(missingLib.body, /Library:GLOBAL\.NoSuchLib does not exist/);
    });
  });
}

for (const backend of backends()) {
  describe(`${backend.name}: upgrade`, () => {
    test('a database made before imports had their parameters gets them on the next start, and imports work', async () => {
      const t = await startTestServer(backend);
      try {
        const def = await t.server.store.getObject('JobDefinition', 'GLOBAL.System_Import_Archive');
        assert.ok(def);
        const old = (def.data.Parameters as Array<{ Name: string }>).filter((p) => p.Name === 'FileName');
        await t.server.store.patchObjectData(def.uniqueId, { ...def.data, Parameters: old });
        await t.restart();
        const names = (await t.req('GET', '/JobDefinition/GLOBAL.System_Import_Archive')).json.Parameters.map(
          (p: { Name: string }) => p.Name,
        );
        assert.deepEqual(names, ['FileName', 'TargetPartition', 'ImportRuleSet', 'RuleSetProperties']);
        const res = await t.xml('PUT', '/car', {
          payload: await writeCar([queueEntry('GLOBAL', 'AfterUpgrade')]),
          headers: { ...ZIP, 'X-Vendor-TargetPartition': 'GLOBAL' },
        });
        assert.equal(statusOf(res.body), 'Completed', res.body);
      } finally {
        await t.close();
      }
    });
  });
}
