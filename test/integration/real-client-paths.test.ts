import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { backends } from '../helpers/backends.ts';
import { postCreated } from '../helpers/jobs.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.ts';

/**
 * The product's own clients call `…/External/REDWOOD/Redwood_RestService/rest/v1` (folder and
 * component named apart) with the header spelled `X-API-KEY`. This is their sequence, over real HTTP: list the
 * definitions through the XML interface with basic auth, then GET each through the JSON interface.
 */

const [sqlite] = backends();

describe('--vendor Redwood --vendor-folder REDWOOD serves the paths real clients call', () => {
  let t: TestServer;
  let origin: string;
  before(async () => {
    t = await startTestServer(
      sqlite as NonNullable<typeof sqlite>,
      { vendor: 'Redwood', vendorFolder: 'REDWOOD', localAgent: false },
      { listen: true },
    );
    origin = `http://127.0.0.1:${(t.server.app.server.address() as AddressInfo).port}`;
    await postCreated(t, '/JobDefinition/Nightly_Load', { JobDefinitionType: 'BASH', Script: 'echo load' });
    await postCreated(t, '/JobDefinition/Nightly_Report', { JobDefinitionType: 'BASH', Script: 'echo report' });
  });
  after(() => t.close());

  test('list/JobDefinition?check=View with basic auth, then GET each with X-API-KEY', async () => {
    assert.equal(t.base, '/millrace/api-extension/External/REDWOOD/Redwood_RestService/rest/v1');
    const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
    const list = await fetch(`${origin}/millrace/api-rest/list/JobDefinition?check=View`, {
      headers: { Authorization: basic },
    });
    assert.equal(list.status, 200);
    const xml = await list.text();
    const keys = [...xml.matchAll(/<business-key>JobDefinition:([^<]+)<\/business-key>/g)].map((m) => m[1] as string);
    assert.ok(keys.includes('GLOBAL.Nightly_Load') && keys.includes('GLOBAL.Nightly_Report'), xml);
    for (const key of keys) {
      const res = await fetch(
        `${origin}/millrace/api-extension/External/REDWOOD/Redwood_RestService/rest/v1/JobDefinition/${key}`,
        { headers: { 'X-API-KEY': ADMIN_KEY, Accept: 'application/json' } },
      );
      assert.equal(res.status, 200, key);
      const body = (await res.json()) as { Name: string; Partition: string };
      assert.equal(`${body.Partition}.${body.Name}`, key);
    }
    // The description document is where clients expect it, and the vendor path alone is not served.
    assert.equal(
      (await fetch(`${origin}/millrace/api-extension/External/REDWOOD/Redwood_RestService/rest/swagger.yml`)).status,
      200,
    );
    const wrong = await fetch(
      `${origin}/millrace/api-extension/External/Redwood/Redwood_RestService/rest/v1/JobDefinition/GLOBAL.Nightly_Load`,
      { headers: { 'X-API-KEY': ADMIN_KEY } },
    );
    assert.equal(wrong.status, 404);
  });

  test('the import headers follow the vendor name: X-Redwood-TargetPartition', async () => {
    const wadl = await fetch(`${origin}/millrace/api-rest/capabilitiesxml`, {
      headers: { Authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}` },
    });
    assert.match(await wadl.text(), /X-Redwood-TargetPartition/);
  });

  test('MILLRACE_VENDOR_FOLDER and --vendor-folder, checked', () => {
    assert.equal(
      loadConfig({}, { MILLRACE_VENDOR: 'Redwood', MILLRACE_VENDOR_FOLDER: 'REDWOOD' }).vendorFolder,
      'REDWOOD',
    );
    assert.equal(loadConfig({ vendorFolder: 'ACME' }, { MILLRACE_VENDOR_FOLDER: 'REDWOOD' }).vendorFolder, 'ACME');
    assert.equal(loadConfig({}, {}).vendorFolder, undefined, 'default: the vendor name');
    assert.throws(() => loadConfig({ vendorFolder: '../x' }, {}), /invalid vendor folder/);
  });
});
