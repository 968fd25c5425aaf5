import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writeCar } from '../../../src/car/archive-writer.ts';
import { definitionTypes } from '../../../src/model/registry.ts';
import { listAllObjects } from '../../../src/store/all-objects.ts';
import { backends } from '../../helpers/backends.ts';
import { craftZip, zeroBomb } from '../../helpers/zip-craft.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Hostile XML bodies and archives (the import privileges are in car.test.ts): each hostile body gets its
 * status, nothing is written to the data folder, no object changes, no archive stays behind, the server answers.
 */

const XML = { 'content-type': 'application/xml' };
const ZIP = { 'content-type': 'application/zip' };
const queue = (name: string, inner = '') =>
  `<Queue><Name>${name}</Name><Partition type="Partition" path="GLOBAL"/>${inner}</Queue>`;
const entry = (name: string, data = Buffer.from(`<?xml version="1.0"?>${queue('Zq')}`)) => ({ name, data });

async function walk(dir: string, out: string[] = []): Promise<string[]> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) await walk(path, out);
    // The database's own files are compared through its objects; everything else must stay as it was.
    else if (!/\.sqlite(-wal|-shm)?$/.test(e.name)) out.push(`${path}:${(await stat(path)).size}`);
  }
  return out.sort();
}

for (const backend of backends()) {
  describe(backend.name, () => {
    let t: TestServer;
    let listener: Server;
    let connections = 0;
    let listenerPort = 0;
    before(async () => {
      t = await startTestServer(backend);
      listener = createServer((_req, res) => res.end('<!ENTITY leaked "leaked">'));
      listener.on('connection', () => {
        connections += 1;
      });
      await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
      listenerPort = (listener.address() as { port: number }).port;
    });
    after(async () => {
      listener.close();
      await t.close();
    });

    const snapshot = async () => {
      const objects: unknown[] = [];
      for (const type of definitionTypes()) objects.push(...(await listAllObjects(t.server.store, type.name)));
      return { files: await walk(t.config.dataDir), objects, archives: await t.server.store.blobs.list('archive') };
    };

    /** Sends a hostile request and checks what every hostile case must hold to. */
    async function refused(
      what: string,
      send: () => Promise<{ status: number; body: string }>,
      status: number | number[],
      pattern?: RegExp,
      asJob = false,
    ) {
      const before = await snapshot();
      const res = await send();
      const allowed = Array.isArray(status) ? status : [status];
      assert.ok(allowed.includes(res.status), `${what}: ${res.status} ${res.body}`);
      assert.match(res.body, new RegExp(`<code>${res.status}</code>`), `${what}: an XML error`);
      if (pattern) assert.match(res.body, pattern, what);
      assert.doesNotMatch(res.body, /root:|leaked/, `${what}: nothing external in the answer`);
      const now = await snapshot();
      // An archive refused by its import job leaves that job's log, and nothing else.
      if (asJob) now.files = now.files.filter((f) => !f.includes('/jobfiles/'));
      assert.deepEqual(now, before, `${what}: nothing written, no object changed`);
      assert.equal((await t.xml('GET', '/version')).status, 200, `${what}: the server still answers`);
    }
    const xmlPut =
      (payload: string | Buffer, headers = XML) =>
      () =>
        t.xml('PUT', '/xml', { payload, headers });
    const carPut = (payload: Buffer) => () => t.xml('PUT', '/car', { payload, headers: ZIP });

    test('an external entity (file and http) is refused before parsing; the listener sees no connection', async () => {
      const file = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${queue('Xxe', '<Description>&x;</Description>')}`;
      const http = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "http://127.0.0.1:${listenerPort}/">]>${queue('Xxe', '<Description>&x;</Description>')}`;
      await refused('file XXE', xmlPut(file), 400, /DOCTYPE/);
      await refused('http XXE', xmlPut(http), 400, /DOCTYPE/);
      await refused(
        'XXE in a CAR entry',
        carPut(await writeCar([entry('Queue/GLOBAL.Xxe.xml', Buffer.from(http))])),
        422,
        /DOCTYPE/,
        true,
      );
      assert.equal(connections, 0);
    });

    test('billion laughs and a large entity referenced 10,000 times are refused (400)', async () => {
      let laughs = '<!ENTITY l0 "lol">';
      for (let i = 1; i < 10; i++) laughs += `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`;
      await refused(
        'billion laughs',
        xmlPut(`<?xml version="1.0"?><!DOCTYPE r [${laughs}]>${queue('Lol', '<Description>&l9;</Description>')}`),
        400,
      );
      const big = `<!DOCTYPE r [<!ENTITY b "${'x'.repeat(10_000)}">]>${queue('Big', `<Comment>${'&b;'.repeat(10_000)}</Comment>`)}`;
      await refused('quadratic blowup', xmlPut(big), 400);
    });

    test('a million character references hit the size cap (413); 100,000 nested elements are refused (400)', async () => {
      await refused(
        'character references',
        xmlPut(queue('Refs', `<Comment>${'&#65;'.repeat(1_000_000)}</Comment>`)),
        413,
      );
      await refused('deep nesting', xmlPut(`${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}`), 400, /deep/i);
    });

    test('a wrong content type or charset is 415; UTF-16 bodies are 400', async () => {
      await refused('JSON content type', xmlPut(queue('Ct'), { 'content-type': 'application/json' }), 415);
      await refused('no content type', xmlPut(queue('Ct'), {} as typeof XML), 415);
      await refused('charset UTF-16', xmlPut(queue('Ct'), { 'content-type': 'text/xml; charset=UTF-16' }), 415);
      await refused('UTF-16 without BOM', xmlPut(Buffer.from(queue('Ct'), 'utf16le')), 400, /UTF-8/);
      await refused('UTF-16 declared', xmlPut(`<?xml version="1.0" encoding="UTF-16"?>${queue('Ct')}`), 400, /UTF-8/);
    });

    test('unsafe entry names and links are refused (422) and nothing is extracted anywhere', async () => {
      for (const name of ['../../x', '/etc/x', 'C:\\x', '..\\x', 'Queue/../../x.xml', 'Queue/./GLOBAL.A.xml'])
        await refused(`name ${name}`, carPut(craftZip([{ name, data: Buffer.from('x') }])), 422);
      await refused(
        'symlink',
        carPut(
          craftZip([
            {
              name: 'Queue/GLOBAL.Link.xml',
              data: Buffer.from('/etc/passwd'),
              externalAttributes: (0o120777 << 16) >>> 0,
            },
          ]),
        ),
        422,
        /link|regular/i,
      );
      await refused(
        'absolute path in a folder entry',
        carPut(craftZip([{ name: '/abs/' }, entry('Queue/GLOBAL.A.xml')])),
        422,
      );
    });

    test('zip bombs stop once the inflated bytes pass the caps (413); too many or overlapping entries (422)', async () => {
      const bomb = zeroBomb(1024);
      await refused(
        '1 KB declared, 1 GB inflated',
        carPut(craftZip([{ name: 'Queue/GLOBAL.Bomb.xml', raw: bomb, method: 8, uncompressedSize: 1024, crc: 0 }])),
        [413, 422],
        /inflate/,
      );
      await refused(
        'ratio over 100:1',
        carPut(
          craftZip([
            {
              name: 'Queue/GLOBAL.Ratio.xml',
              raw: zeroBomb(20),
              method: 8,
              uncompressedSize: 20 * 1024 * 1024,
              crc: 0,
            },
          ]),
        ),
        413,
      );
      const many = Array.from({ length: 50_001 }, (_, i) => ({
        name: `Queue/GLOBAL.Q${i}.xml`,
        data: Buffer.alloc(0),
        method: 0,
      }));
      await refused('more than 50,000 entries', carPut(craftZip(many)), 422, /entries/);
      const overlapping = craftZip([
        entry('Queue/GLOBAL.A.xml'),
        { name: 'Queue/GLOBAL.B.xml', sameDataAs: 0 },
        { name: 'Queue/GLOBAL.C.xml', sameDataAs: 0 },
      ]);
      await refused('overlapping entries (Fifield)', carPut(overlapping), 422, /overlap/i);
      await refused('not a zip at all', carPut(Buffer.from('PK\x03\x04 but nothing after')), 422);
      await refused(
        'too large a body',
        () => t.xml('PUT', '/car', { payload: Buffer.alloc(64 * 1024 * 1024 + 1), headers: ZIP }),
        413,
      );
    });

    test('a nested zip is never expanded: an archive inside the CAR is refused as an unexpected entry', async () => {
      const inner = await writeCar([entry('Queue/GLOBAL.Inner.xml')]);
      await refused(
        'nested zip',
        carPut(await writeCar([entry('Queue/GLOBAL.Outer.xml'), { name: 'Queue/inner.zip', data: inner }])),
        422,
        /unexpected entry/,
      );
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Outer')).status, 404);
    });

    test('duplicate, case-colliding and non-UTF-8 entry names are refused (422)', async () => {
      await refused('duplicate', carPut(craftZip([entry('Queue/GLOBAL.A.xml'), entry('Queue/GLOBAL.A.xml')])), 422);
      await refused(
        'case collision',
        carPut(craftZip([entry('Queue/GLOBAL.A.xml'), entry('queue/global.a.xml')])),
        422,
      );
      await refused(
        'invalid UTF-8',
        carPut(craftZip([{ name: Buffer.from([0x51, 0xff, 0xfe, 0x2e, 0x78]), utf8: true, data: Buffer.from('x') }])),
        422,
      );
      await refused(
        'non-ASCII without the UTF-8 flag',
        carPut(
          craftZip([{ name: Buffer.from('Queue/GLOBAL.\xe9.xml', 'latin1'), utf8: false, data: Buffer.from('x') }]),
        ),
        422,
      );
    });

    test('POST /Import refuses the same hostile archives with the same statuses, as JSON; with WaitForCompletion=true a refusal is a failed import (500, saying why)', async () => {
      const post = (payload: Buffer, wait = 'false') =>
        t.req('POST', `/Import?WaitForCompletion=${wait}`, {
          payload,
          headers: { 'content-type': 'application/octet-stream' },
        });
      const before = await snapshot();
      const slipCar = craftZip([{ name: '../../x', data: Buffer.from('x') }]);
      const slip = await post(slipCar);
      assert.equal(slip.status, 422, slip.body);
      assert.equal(slip.json.code, '422');
      const slipWaited = await post(slipCar, 'true');
      assert.equal(slipWaited.status, 500, slipWaited.body);
      assert.equal(slipWaited.json.code, '500');
      assert.match(slipWaited.json.message, /^Import failed: .*\.\.\/\.\.\/x/);
      const notCar = await post(Buffer.from('this is not a CAR file'), 'true');
      assert.equal(notCar.status, 500, notCar.body);
      assert.match(notCar.json.message, /^Import failed: /);
      const bomb = await post(
        craftZip([{ name: 'Queue/GLOBAL.Bomb.xml', raw: zeroBomb(64), method: 8, uncompressedSize: 10, crc: 0 }]),
      );
      assert.ok([413, 422].includes(bomb.status), bomb.body);
      const ratio = await post(
        craftZip([
          { name: 'Queue/GLOBAL.Ratio.xml', raw: zeroBomb(20), method: 8, uncompressedSize: 20 * 1024 * 1024, crc: 0 },
        ]),
      );
      assert.equal(ratio.status, 413, ratio.body);
      assert.deepEqual(await snapshot(), before);
    });
  });
}
