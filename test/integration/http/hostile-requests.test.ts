import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULTS } from '../../../src/config/config.ts';
import { backends } from '../../helpers/backends.ts';
import { assertJsonError, assertXmlError, RawClient, rawExchange } from '../../helpers/raw-http.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, basicAuth, startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * Hostile clients on a listening server, through raw sockets: slow bodies and slow headers end with 408
 * within the deadline or the minimum rate, connections per address are capped, a body nobody wants is not read,
 * and every broken request gets the error record of the interface it came to, never the framework's.
 */

const [backend] = backends();

describe(`hostile requests (${backend?.name})`, () => {
  let t: TestServer;
  let port = 0;
  before(async () => {
    t = await startTestServer(
      backend as NonNullable<typeof backend>,
      {
        localAgent: false,
        limits: {
          ...DEFAULTS.limits,
          headersTimeoutMs: 3000,
          requestTimeoutMs: 8000,
          minBodyBytesPerSecond: 200,
          maxConnectionsPerAddress: 40,
          maxEventLoopDelayMs: 60_000,
        },
      },
      { listen: true },
    );
    port = (t.server.app.server.address() as { port: number }).port;
    // The target of the broken PUTs: the caller's right to change it is checked before its body is read.
    assert.equal((await t.req('POST', '/Queue/GLOBAL.X', { body: {} })).status, 201);
  });
  after(async () => {
    await t.close();
  });

  const json = (path: string) => `${t.base}${path}`;
  const xml = (path: string) => `${t.xmlBase}${path}`;
  const keyHeader = `X-API-Key: ${ADMIN_KEY}\r\n`;
  const basicHeader = `Authorization: ${basicAuth('admin', ADMIN_PASSWORD)}\r\n`;

  test('slow bodies end with 408 in the interface shape: below the minimum rate, or past the deadline', async () => {
    const slow = async (target: string, auth: string, perTick: number) => {
      const c = new RawClient(port);
      const type = target.startsWith(t.xmlBase) ? 'application/xml' : 'application/json';
      // A JSON create (POST) reads its body once the caller may create; a PUT would first need the object.
      const method = target.startsWith(t.xmlBase) ? 'PUT' : 'POST';
      await c.write(
        `${method} ${target} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: ${type}\r\nContent-Length: 100000\r\n\r\n`,
      );
      // Writes until the server closes the connection (bounded: the deadline is 8 s).
      const writer = (async () => {
        while (await c.write('x'.repeat(perTick))) await new Promise((r) => setTimeout(r, 250));
      })();
      await c.response(60_000);
      await c.done;
      await writer;
      return c.answer();
    };
    const [jsonTrickle, xmlTrickle, jsonSteady, xmlSteady, anonymous] = await Promise.all([
      slow(json('/Queue/GLOBAL.Slow'), keyHeader, 1),
      slow(xml('/xml'), basicHeader, 1),
      // 400 bytes a second passes the minimum rate but not the 8 s deadline of 100,000 bytes.
      slow(json('/Queue/GLOBAL.Slow'), keyHeader, 100),
      slow(xml('/xml'), basicHeader, 100),
      slow(xml('/xml'), '', 1),
    ]);
    assertJsonError(jsonTrickle, 408);
    assertXmlError(xmlTrickle, 408);
    assertJsonError(jsonSteady, 408);
    assertXmlError(xmlSteady, 408);
    // A trickle is cut by the minimum rate (after its grace period, before the 8 s deadline); a steady body that
    // keeps the rate runs into the deadline.
    for (const a of [jsonTrickle, xmlTrickle]) assert.match(a.body, /slower than 200 bytes per second/, a.body);
    for (const a of [jsonSteady, xmlSteady]) assert.match(a.body, /did not arrive within 8 s/, a.body);
    assertXmlError(anonymous, 401);
    for (const a of [jsonTrickle, xmlTrickle, jsonSteady, xmlSteady, anonymous]) assert.equal(a.closed, true);
    assert.equal((await t.req('GET', '/Queue/GLOBAL.Slow')).status, 404, 'nothing was stored');
  });

  test('slow headers end with 408', async () => {
    const c = new RawClient(port);
    await c.write(`GET ${json('/Queue/GLOBAL.Default')} HTTP/1.1\r\nHost: x\r\n`);
    const a = await c.response(60_000);
    await c.done;
    assertJsonError(a, 408);
  });

  test('connections beyond the per-address cap are answered 503 and closed', async () => {
    const idle: RawClient[] = [];
    try {
      for (let i = 0; i < 40; i++) idle.push(new RawClient(port));
      await Promise.all(idle.map((c) => new Promise((r) => c.socket.once('connect', r))));
      // The server counts a connection when it accepts it; wait until it has seen all forty.
      await waitFor('the server to count 40 connections', async () => {
        const n = await new Promise<number>((r) => t.server.app.server.getConnections((_e, n) => r(n)));
        return n >= 40 ? true : undefined;
      });
      const over = await rawExchange(
        port,
        `GET ${json('/Queue/GLOBAL.Default')} HTTP/1.1\r\nHost: x\r\n${keyHeader}\r\n`,
      );
      assertJsonError(over, 503);
      assert.ok(over.headers['retry-after']);
      const overXml = await rawExchange(port, `GET ${xml('/version')} HTTP/1.1\r\nHost: x\r\n${basicHeader}\r\n`);
      assertXmlError(overXml, 503);
    } finally {
      for (const c of idle) c.close();
    }
    await waitFor('connections to be released', async () => {
      const a = await rawExchange(port, `GET ${json('/Queue/GLOBAL.Default')} HTTP/1.1\r\nHost: x\r\n${keyHeader}\r\n`);
      return a.status === 200 ? true : undefined;
    });
  });

  test('a large body without credentials is not read: 401 at once and the connection closes', async () => {
    for (const [target, status, check] of [
      [json('/Queue/GLOBAL.Big'), 401, assertJsonError],
      [xml('/xml'), 401, assertXmlError],
    ] as const) {
      const c = new RawClient(port);
      await c.write(
        `PUT ${target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n`,
      );
      let sent = 0;
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      while (sent < 100_000_000 && (await c.write(chunk))) sent += chunk.length;
      await c.done;
      check(c.answer(), status);
      assert.ok(sent < 50_000_000, `the server read ${sent} bytes of a body it refused`);
    }
  });

  test('a chunked body past the route limit is cut with 413 and the connection closes', async () => {
    for (const [target, check, auth] of [
      [json('/Queue/GLOBAL.Big'), assertJsonError, keyHeader],
      [xml('/xml'), assertXmlError, basicHeader],
    ] as const) {
      const c = new RawClient(port);
      const method = target.startsWith(t.xmlBase) ? 'PUT' : 'POST';
      await c.write(
        `${method} ${target} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      let sent = 0;
      const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x20), Buffer.from('\r\n')]);
      while (sent < 100_000_000 && (await c.write(chunk))) sent += 0x10000;
      await c.done;
      check(c.answer(), 413);
      assert.ok(sent < 50_000_000, `the server read ${sent} bytes of a body past its limit`);
    }
  });

  test('every kind of broken request gets the error record of its interface', async () => {
    const long = 'A'.repeat(401);
    const cases: Array<[string, (base: (p: string) => string, auth: string) => string, number]> = [
      ['bad percent-encoding', (b, a) => `GET ${b('/object/Queue/%ff%fe')} HTTP/1.1\r\nHost: x\r\n${a}\r\n`, 400],
      ['a key longer than 400', (b, a) => `GET ${b(`/object/Queue/${long}`)} HTTP/1.1\r\nHost: x\r\n${a}\r\n`, 414],
      [
        'a path longer than the header limit',
        (b, a) => `GET ${b(`/${'x'.repeat(20_000)}`)} HTTP/1.1\r\nHost: x\r\n${a}\r\n`,
        431,
      ],
      ['an invalid method', (b, a) => `G@T ${b('/version')} HTTP/1.1\r\nHost: x\r\n${a}\r\n`, 400],
      ['an unknown method', (b, a) => `PROPFIND ${b('/version')} HTTP/1.1\r\nHost: x\r\n${a}\r\n`, 404],
      [
        'a header without a colon',
        (b, a) => `GET ${b('/version')} HTTP/1.1\r\nHost: x\r\nBroken header\r\n${a}\r\n`,
        400,
      ],
      [
        'a bad Content-Length',
        (b, a) => `PUT ${b('/xml')} HTTP/1.1\r\nHost: x\r\n${a}Content-Length: abc\r\n\r\n`,
        400,
      ],
      [
        'Content-Length with chunked',
        (b, a) =>
          `PUT ${b('/xml')} HTTP/1.1\r\nHost: x\r\n${a}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        400,
      ],
      [
        'a body shorter than its Content-Length',
        (b, a) =>
          `PUT ${b('/xml')} HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{}`,
        408,
      ],
    ];
    // The JSON interface serves /Queue/<key> where the XML one serves /object/Queue/<key>.
    const jsonPath = (p: string) =>
      json(p.replace('/object/Queue/', '/Queue/').replace('/version', '/Queue').replace('/xml', '/Queue/GLOBAL.X'));
    const failures: string[] = [];
    await Promise.all(
      cases.map(async ([what, request, status]) => {
        const [j, x] = await Promise.all([
          rawExchange(port, request(jsonPath, keyHeader), 60_000),
          rawExchange(port, request(xml, basicHeader), 60_000),
        ]);
        for (const [name, check, a] of [
          ['JSON', assertJsonError, j],
          ['XML', assertXmlError, x],
        ] as const)
          try {
            check(a, status);
          } catch (e) {
            failures.push(`${what} (${name}): ${(e as Error).message}`);
          }
      }),
    );
    assert.deepEqual(failures, []);
  });
});

describe(`shedding under overload (${backend?.name})`, () => {
  let t: TestServer;
  let port = 0;
  before(async () => {
    t = await startTestServer(
      backend as NonNullable<typeof backend>,
      { localAgent: false, limits: { ...DEFAULTS.limits, maxInFlight: 2, maxEventLoopDelayMs: 60_000 } },
      { listen: true },
    );
    port = (t.server.app.server.address() as { port: number }).port;
    // Held requests change it: their bodies are read only once the caller's right to change it is known.
    assert.equal((await t.req('POST', '/Queue/GLOBAL.Held', { body: {} })).status, 201);
  });
  after(async () => {
    await t.close();
  });

  test('beyond the requests in flight, 503 with Retry-After in each interface; health and metrics still answer', async () => {
    const key = `X-API-Key: ${ADMIN_KEY}\r\n`;
    // Two requests whose bodies are still coming are in flight until they are answered.
    const held = [new RawClient(port), new RawClient(port)];
    for (const c of held)
      await c.write(
        `PUT ${t.base}/Queue/GLOBAL.Held HTTP/1.1\r\nHost: x\r\n${key}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      );
    try {
      const shed = await waitFor('a request to be shed', async () => {
        const a = await rawExchange(port, `GET ${t.base}/Queue/GLOBAL.Default HTTP/1.1\r\nHost: x\r\n${key}\r\n`);
        return a.status === 503 ? a : undefined;
      });
      assertJsonError(shed, 503);
      assert.equal(shed.headers['retry-after'], '1');
      const basic = `Authorization: ${basicAuth('admin', ADMIN_PASSWORD)}\r\n`;
      assertXmlError(await rawExchange(port, `GET ${t.xmlBase}/version HTTP/1.1\r\nHost: x\r\n${basic}\r\n`), 503);
      const root = t.xmlBase.replace(/\/api-rest$/, '');
      for (const path of ['/health/live', '/health/ready', '/metrics']) {
        const a = await rawExchange(port, `GET ${root}${path} HTTP/1.1\r\nHost: x\r\n${key}${basic}\r\n`);
        assert.notEqual(a.status, 503, `${path} is never shed`);
        // Served at the root of the port (src/http/ops-routes.ts): answered while requests are shed.
        const atRoot = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
        assert.equal(atRoot.status, 200, `${path} at the root answers while requests are shed`);
      }
    } finally {
      for (const c of held) c.close();
    }
    await waitFor('the server to serve again', async () => {
      const a = await rawExchange(port, `GET ${t.base}/Queue/GLOBAL.Default HTTP/1.1\r\nHost: x\r\n${key}\r\n`);
      return a.status === 200 ? true : undefined;
    });
  });
});
