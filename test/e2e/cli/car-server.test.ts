import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readCar } from '../../../src/car/archive.ts';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { getJob, postCreated } from '../../helpers/jobs.ts';
import { ADMIN_PASSWORD, startE2eServer, type TestServer } from '../../helpers/server.ts';

/** `millrace car export | keygen | sign | import` against a real listening server, as an operator promotes a definition. */

const [backend] = backends();

describe('millrace car against a running server', () => {
  let t: TestServer;
  let dir = '';
  let env: Record<string, string> = {};
  before(async () => {
    t = await startE2eServer(backend as NonNullable<typeof backend>);
    const { port } = t.server.app.server.address() as { port: number };
    env = { MILLRACE_URL: `http://127.0.0.1:${port}/millrace`, MILLRACE_PASSWORD: ADMIN_PASSWORD };
    dir = mkdtempSync(join(tmpdir(), 'millrace-car-e2e-'));
    await postCreated(t, '/Partition/PROD', {});
    await postCreated(t, '/JobDefinition/GLOBAL.Promoted', { JobDefinitionType: 'BASH', Script: 'echo promoted' });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  test('export → sign → import --signed --target-partition moves the definition and runs as an import job', async () => {
    const car = join(dir, 'promoted.car');
    const exported = await runCli(['car', 'export', 'JobDefinition', 'GLOBAL.Promoted', '-o', car], env);
    assert.equal(exported.code, 0, exported.stderr);
    assert.ok((await readCar(readFileSync(car))).some((e) => e.name === 'JobDefinition/GLOBAL.Promoted.xml'));
    const unsignedImport = await runCli(['car', 'import', car, '--signed', '--target-partition', 'PROD'], env);
    assert.equal(unsignedImport.code, 1, 'an unsigned archive is refused with --signed');
    assert.match(unsignedImport.stderr + unsignedImport.stdout, /not signed/);
    const keygen = await runCli(['car', 'keygen', join(dir, 'release')], env);
    assert.equal(keygen.code, 0, keygen.stderr);
    assert.equal((await runCli(['car', 'sign', '--key', join(dir, 'release.key'), car], env)).code, 0);
    const trusted = join(t.config.dataDir, 'trusted-keys');
    mkdirSync(trusted, { recursive: true });
    copyFileSync(join(dir, 'release.pub'), join(trusted, 'release.pub'));
    const imported = await runCli(['car', 'import', car, '--signed', '--target-partition', 'PROD'], env);
    assert.equal(imported.code, 0, imported.stderr);
    const jobId = Number(/import job (\d+): Completed/.exec(imported.stdout)?.[1]);
    assert.ok(jobId > 0, imported.stdout);
    const job = await getJob(t, jobId);
    assert.equal(job.JobDefinition, 'GLOBAL.System_Import_Archive');
    assert.equal(job.Status, 'Completed');
    const moved = await t.req('GET', '/JobDefinition/PROD.Promoted');
    assert.equal(moved.status, 200);
    assert.equal(moved.json.Script, 'echo promoted');
  });
});
