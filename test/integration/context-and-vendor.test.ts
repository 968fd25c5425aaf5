import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig, normalizeContext } from '../../src/config/config.ts';
import { backends } from '../helpers/backends.ts';
import { startTestServer } from '../helpers/server.ts';

const [sqlite] = backends();

describe('--context and --vendor shape the paths', () => {
  for (const [context, vendor, expected] of [
    ['acme/prod', 'Acme', '/acme/prod/api-extension/External/Acme/Acme_RestService/rest/v1'],
    ['', 'Vendor', '/api-extension/External/Vendor/Vendor_RestService/rest/v1'],
  ] as const) {
    test(`context "${context}", vendor ${vendor}`, async () => {
      const t = await startTestServer(sqlite as NonNullable<typeof sqlite>, { context, vendor });
      try {
        assert.equal(t.base, expected);
        const ok = await t.req('GET', '/Queue/Default');
        assert.equal(ok.status, 200);
        const wrong = await t.req(
          'GET',
          '//millrace/api-extension/External/Vendor/Vendor_RestService/rest/v1/Queue/Default',
        );
        if (context !== '' || vendor !== 'Vendor') assert.equal(wrong.status, 404);
        // The server's root and its context lead to the dashboard.
        const ui = `${context ? `/${context}` : ''}/ui/`;
        for (const entry of ['/', ...(context ? [`/${context}`, `/${context}/`] : [])]) {
          const res = await t.req('GET', `/${entry}`);
          assert.equal(res.status, 302, entry);
          assert.equal(res.headers.location, ui, entry);
        }
        assert.equal((await t.req('GET', `/${ui}`)).status, 200);
      } finally {
        await t.close();
      }
    });
  }

  test('flags and environment are checked', () => {
    assert.equal(normalizeContext('/acme/prod/'), 'acme/prod');
    assert.throws(() => normalizeContext('acme/../etc'), /invalid context/);
    assert.throws(() => loadConfig({ vendor: 'Bad Vendor' }), /invalid vendor/);
    assert.throws(() => loadConfig({ port: '70000' }), /invalid --port: "70000"/);
    assert.equal(loadConfig({}, { MILLRACE_PORT: '8080', MILLRACE_CONTEXT: '' }).context, '');
    assert.equal(loadConfig({ port: '9090' }, { MILLRACE_PORT: '8080' }).port, 9090);
  });
});
