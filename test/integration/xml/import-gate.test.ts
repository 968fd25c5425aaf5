import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readCar } from '../../../src/car/archive.ts';
import { writeCar } from '../../../src/car/archive-writer.ts';
import { DEFAULTS } from '../../../src/config/config.ts';
import { IMPORT_REQUESTS_AT_ONCE } from '../../../src/services/import-gate.ts';
import { backends } from '../../helpers/backends.ts';
import { parseMetrics, sample } from '../../helpers/prometheus.ts';
import { assertJsonError, assertXmlError, RawClient, rawExchange } from '../../helpers/raw-http.ts';
import { ADMIN_KEY, ADMIN_PASSWORD, basicAuth, startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * Archives are handled a few at a time server-wide. An import request takes a receiving slot
 * before its body is read; with every slot taken and no room to wait, the next import is answered 503 in its
 * interface's shape and changes nothing; a slot comes back once an import's job is submitted. (Peak RSS under 8 hostile imports: bench:import-memory.)
 */
const queueXml = (name: string) =>
  Buffer.from(`<?xml version="1.0"?><Queue><Name>${name}</Name><Partition type="Partition" path="GLOBAL"/></Queue>`);

for (const backend of backends()) {
  describe(`imports one at a time (${backend.name})`, () => {
    let t: TestServer;
    let port = 0;
    before(async () => {
      t = await startTestServer(
        backend,
        {
          localAgent: false,
          // A low minimum body rate: the holders' archives stop arriving after 10 bytes and must keep their slots
          // while a loaded machine probes (cut after about 25 s, not 5), yet still be cut in the end if the test
          // fails, so the server can close (the slow-upload cut itself is tested in hostile-requests.test.ts).
          limits: {
            ...DEFAULTS.limits,
            importConcurrency: 1,
            importQueue: 0,
            maxEventLoopDelayMs: 60_000,
            minBodyBytesPerSecond: 0.5,
          },
        },
        { listen: true },
      );
      port = (t.server.app.server.address() as { port: number }).port;
    });
    after(() => t.close());

    test('while archives are being received in every slot, another import gets 503; then the next one is served', async () => {
      const first = await writeCar([{ name: 'Queue/GLOBAL.GateFirst.xml', data: queueXml('GateFirst') }]);
      const second = await writeCar([{ name: 'Queue/GLOBAL.GateSecond.xml', data: queueXml('GateSecond') }]);
      const basic = `Authorization: ${basicAuth('admin', ADMIN_PASSWORD)}\r\n`;
      // Every receiving slot is taken by an archive still arriving.
      const holders = Array.from({ length: IMPORT_REQUESTS_AT_ONCE }, () => new RawClient(port));
      for (const holder of holders) {
        await holder.write(
          `PUT ${t.xmlBase}/car HTTP/1.1\r\nHost: x\r\n${basic}Content-Type: application/zip\r\nContent-Length: ${first.length}\r\n\r\n`,
        );
        await holder.write(first.subarray(0, 10));
      }
      const [holder, ...others] = holders as [RawClient, ...RawClient[]];
      const put = (car: Buffer) =>
        `PUT ${t.xmlBase}/car HTTP/1.1\r\nHost: x\r\n${basic}Content-Type: application/zip\r\nContent-Length: ${car.length}\r\n\r\n`;
      const post = (car: Buffer) =>
        `POST ${t.base}/Import HTTP/1.1\r\nHost: x\r\nX-API-Key: ${ADMIN_KEY}\r\nContent-Type: application/zip\r\nContent-Length: ${car.length}\r\n\r\n`;
      // The probes go only once the server has put every holder in the gate (its gauge on /metrics says so): a probe
      // sent earlier could take a slot before the last holder is read.
      await waitFor('the requests to hold the slots', async () => {
        const scrape = await t.req('GET', '//metrics', { key: null });
        return sample(parseMetrics(scrape.body), 'millrace_import_requests') === IMPORT_REQUESTS_AT_ONCE
          ? true
          : undefined;
      });
      const xmlBusy = await rawExchange(port, Buffer.concat([Buffer.from(put(second)), second]));
      assertXmlError(xmlBusy, 503);
      assert.ok(Number(xmlBusy.headers['retry-after']) > 0);
      const jsonBusy = await rawExchange(port, Buffer.concat([Buffer.from(post(second)), second]));
      assertJsonError(jsonBusy, 503);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.GateSecond')).status, 404, 'nothing was imported');

      for (const c of others) c.close();
      await holder.write(first.subarray(10));
      const done = await holder.response();
      holder.close();
      assert.equal(done.status, 200, done.body);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.GateFirst')).status, 200);
      const next = await rawExchange(port, Buffer.concat([Buffer.from(post(second)), second]));
      assert.equal(next.status, 200, next.body);
      await waitFor('the second import', async () =>
        (await t.req('GET', '/Queue/GLOBAL.GateSecond')).status === 200 ? true : undefined,
      );
    });
  });
}

test('checking an archive keeps only the entries asked for, with the digests of the others', async () => {
  const car = await writeCar([
    { name: 'META-INF/MANIFEST.MF', data: Buffer.from('Name: x\n') },
    { name: 'Queue/GLOBAL.A.xml', data: queueXml('A') },
  ]);
  const entries = await readCar(car, {}, { retain: (n) => n.startsWith('META-INF/') });
  assert.equal(entries.find((e) => e.name === 'META-INF/MANIFEST.MF')?.data.toString(), 'Name: x\n');
  const dropped = entries.find((e) => e.name === 'Queue/GLOBAL.A.xml');
  assert.equal(dropped?.data.length, 0);
  assert.match(dropped?.sha256 ?? '', /^[0-9a-f]{64}$/);
});
