import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type BrowserContext, chromium } from 'playwright-core';
import { loadConfig } from '../../src/config/config.ts';
import { backends } from '../helpers/backends.ts';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../helpers/server.ts';

/**
 * MILLRACE_CORS_ORIGINS lets pages of the listed origins (Swagger UI on another host, a team's
 * tools) call the interfaces; off by default. Shown with a real Chromium doing real preflights.
 */

const [sqlite] = backends();

/** A page server: another origin from which the browser calls the API. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>tools</p>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A raw preflight, as a browser sends it. */
async function preflight(url: string, origin: string) {
  const res = await fetch(url, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': 'PUT',
      'Access-Control-Request-Headers': 'content-type,x-api-key',
    },
  });
  return { status: res.status, headers: res.headers };
}

describe('CORS allow-list', () => {
  let t: TestServer;
  let api: string;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  let browser: BrowserContext;
  let profile: string;
  before(async () => {
    allowed = await pageServer();
    other = await pageServer();
    t = await startTestServer(
      sqlite as NonNullable<typeof sqlite>,
      { corsOrigins: [allowed.origin], localAgent: false },
      { listen: true },
    );
    api = `http://127.0.0.1:${(t.server.app.server.address() as AddressInfo).port}${t.base}`;
    profile = await mkdtemp(join(tmpdir(), 'millrace-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  });
  after(async () => {
    await browser?.close();
    await rm(profile, { recursive: true, force: true });
    allowed.server.close();
    other.server.close();
    await t.close();
  });

  const callFrom = async (origin: string) => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ api, key }) => {
          try {
            const put = await fetch(`${api}/Queue/GLOBAL.Default`, {
              method: 'PUT',
              headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
              body: JSON.stringify({ Description: 'set from a browser' }),
            });
            const get = await fetch(`${api}/Queue/GLOBAL.Default`, { headers: { 'X-API-Key': key } });
            return { put: put.status, description: (await get.json()).Description as string };
          } catch (err) {
            return { error: String(err) };
          }
        },
        { api, key: ADMIN_KEY },
      );
    } finally {
      await page.close();
    }
  };

  test('a page of an allowed origin calls the API (preflight, PUT with a key, GET)', async () => {
    assert.deepEqual(await callFrom(allowed.origin), { put: 200, description: 'set from a browser' });
  });

  test('a page of another origin is refused by the browser and changes nothing', async () => {
    await t.req('PUT', '/Queue/GLOBAL.Default', { body: { Description: 'before' } });
    const result = await callFrom(other.origin);
    assert.match(String(result.error), /Failed to fetch/);
    assert.equal((await t.req('GET', '/Queue/GLOBAL.Default')).json.Description, 'before');
  });

  test('the preflight is answered without a key and names the allowed origin; other origins get no grant', async () => {
    const ok = await preflight(`${api}/Queue/GLOBAL.Default`, allowed.origin);
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), allowed.origin);
    assert.match(ok.headers.get('access-control-allow-methods') ?? '', /PUT/);
    assert.equal(ok.headers.get('access-control-allow-headers'), 'content-type,x-api-key');
    const no = await preflight(`${api}/Queue/GLOBAL.Default`, other.origin);
    assert.equal(no.headers.get('access-control-allow-origin'), null);
    // The description document too, so Swagger UI on the allowed origin can load it.
    const doc = await fetch(api.replace(/\/v1$/, '/swagger.yml'), { headers: { Origin: allowed.origin } });
    assert.equal(doc.headers.get('access-control-allow-origin'), allowed.origin);
  });

  test('off by default; entries must be origins', () => {
    assert.deepEqual(loadConfig({}, {}).corsOrigins, []);
    assert.deepEqual(
      loadConfig({}, { MILLRACE_CORS_ORIGINS: 'https://a.example.com, http://localhost:8080/' }).corsOrigins,
      ['https://a.example.com', 'http://localhost:8080'],
    );
    assert.throws(
      () => loadConfig({}, { MILLRACE_CORS_ORIGINS: 'https://a.example.com/path' }),
      /invalid MILLRACE_CORS_ORIGINS/,
    );
    assert.throws(() => loadConfig({}, { MILLRACE_CORS_ORIGINS: '*' }), /invalid MILLRACE_CORS_ORIGINS/);
  });
});
