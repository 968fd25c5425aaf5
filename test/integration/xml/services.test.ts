import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseXml, type XmlElement } from '../../../src/car/xml.ts';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** The services of the XML interface other than archives (car.test.ts). */

const XML = { 'content-type': 'application/xml; charset=utf-8' };
const child = (e: XmlElement, name: string) => e.children.find((c) => c.name === name);
const text = (e: XmlElement, name: string) => child(e, name)?.text;

function assertError(
  res: { status: number; body: string; headers: Record<string, unknown> },
  status: number,
  pattern?: RegExp,
): void {
  assert.equal(res.status, status, res.body);
  assert.match(String(res.headers['content-type']), /^text\/xml/);
  const root = parseXml(res.body);
  assert.equal(root.name, 'error');
  assert.equal(text(root, 'code'), String(status));
  if (pattern) assert.match(text(root, 'message') ?? '', pattern);
}

const queueXml = (name: string, extra = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Queue><Comment/><Description>Night batch</Description><Name>${name}</Name><Partition type="Partition" path="GLOBAL"/><ParentApplication/><ExecutionSize>4</ExecutionSize><Held>false</Held>${extra}</Queue>`;

for (const backend of backends()) {
  describe(backend.name, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await t.loginWithGrants('viewer', 'viewer-password-1', ['Queue:GLOBAL:View']);
    });
    after(() => t.close());

    test('version answers <dotted_version>-<date>-<time>_<digits>', async () => {
      const res = await t.xml('GET', '/version');
      assert.equal(res.status, 200);
      assert.match(res.body, /^\d+(\.\d+)+-\d{8}-\d{4}_\d+$/);
    });

    test('capabilitiesxml is a WADL document listing every service, each of which is served', async () => {
      const res = await t.xml('GET', '/capabilitiesxml');
      assert.equal(res.status, 200);
      const root = parseXml(res.body);
      assert.equal(root.name, 'application');
      assert.equal(root.attributes.xmlns, 'http://wadl.dev.java.net/2009/02');
      const resources = child(root, 'resources') as XmlElement;
      assert.equal(resources.attributes.base, `${t.xmlBase}/`);
      const ids = resources.children.flatMap((r) =>
        r.children.filter((m) => m.name === 'method').map((m) => m.attributes.id),
      );
      for (const id of [
        'jobfile',
        'capabilitiesxml',
        'version',
        'api-libs',
        'object',
        'car',
        'car-put',
        'jar-put',
        'xml-put',
        'list',
        'scripts-list',
        'scripts-get-get',
        'scripts-get-post',
      ])
        assert.ok(ids.includes(id), `WADL lacks ${id}: ${ids.join(', ')}`);
      // Every listed resource and method is routed: no 404 "No resource" and no 405 for what the WADL promises.
      for (const r of resources.children)
        for (const m of r.children.filter((c) => c.name === 'method')) {
          const path = `/${r.attributes.path?.replace(/\{[^}]+\}/g, 'x')}`;
          const answer = await t.xml(m.attributes.name as string, path);
          assert.ok(
            answer.status !== 405 && !/No resource at/.test(answer.body),
            `${m.attributes.name} ${path}: ${answer.status} ${answer.body}`,
          );
        }
      const putCar = resources.children.find((r) => r.attributes.path === 'car') as XmlElement;
      const headers = JSON.stringify(putCar);
      for (const h of [
        'async',
        'X-Vendor-Description',
        'X-Vendor-Ruleset',
        'X-Vendor-Ruleset-Properties',
        'X-Vendor-TargetPartition',
        'X-Vendor-Signed-Car',
        'X-Vendor-FileName',
      ])
        assert.ok(headers.includes(`"${h}"`), `car-put header ${h}`);
    });

    test('object answers the XML of docs/architecture.md §13; a missing object, an unknown type and an unseen object are XML 404s', async () => {
      const res = await t.xml('GET', '/object/Queue/GLOBAL.Default');
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/xml/);
      const root = parseXml(res.body);
      assert.deepEqual(
        root.children.map((c) => c.name),
        [
          'Comment',
          'Description',
          'Name',
          'Partition',
          'ParentApplication',
          'ExecutionSize',
          'Held',
          'HoldLevel',
          'Inclusive',
          'InclusiveConsoleJobs',
          'Overdue',
          'QueueTimeZone',
          'TimeWindow',
          'CreationTime',
          'LastModificationTime',
        ],
      );
      assert.deepEqual(child(root, 'Partition')?.attributes, { type: 'Partition', path: 'GLOBAL' });
      assertError(await t.xml('GET', '/object/Queue/GLOBAL.Nope'), 404, /Queue:GLOBAL\.Nope/);
      assertError(await t.xml('GET', '/object/Nonsense/GLOBAL.Default'), 404);
      assertError(
        await t.xml('GET', '/object/JobDefinition/GLOBAL.System_Sleep', { auth: ['viewer', 'viewer-password-1'] }),
        404,
      );
    });

    test('jobfile needs a positive integer id (400), answers 404 for a missing file, and streams a job file', async () => {
      for (const bad of ['0', '-1', 'abc', '1.5', '99999999999999999999'])
        assertError(await t.xml('GET', `/jobfile/${bad}`), 400, /positive integer/);
      assertError(await t.xml('GET', '/jobfile/999999'), 404);
    });

    test('xml-put creates (201) then changes (200) the object it carries', async () => {
      const created = await t.xml('PUT', '/xml', { payload: queueXml('Nightly'), headers: XML });
      assert.equal(created.status, 201, created.body);
      const message = parseXml(created.body);
      assert.equal(message.name, 'message');
      assert.equal(text(child(message, 'message-options') as XmlElement, 'persist'), 'N');
      const ro = child(message, 'rest-object') as XmlElement;
      assert.equal(text(ro, 'business-key'), 'Queue:GLOBAL.Nightly');
      assert.equal(text(ro, 'url'), `${t.xmlBase}/object/Queue/GLOBAL.Nightly`);
      assert.equal(text(ro, 'description'), 'Night batch');
      const json = await t.req('GET', '/Queue/GLOBAL.Nightly');
      assert.equal(json.json.ExecutionSize, 4);
      // The document `object` answers goes back unchanged (read-only times included), with one edit.
      const current = (await t.xml('GET', '/object/Queue/GLOBAL.Nightly')).body.replace(
        '<ExecutionSize>4</ExecutionSize>',
        '<ExecutionSize>9</ExecutionSize>',
      );
      const changed = await t.xml('PUT', '/xml/', { payload: current, headers: { 'content-type': 'text/xml' } });
      assert.equal(changed.status, 200, changed.body);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Nightly')).json.ExecutionSize, 9);
      // `object` is read through the cache of rendered objects: the change shows at once.
      assert.match((await t.xml('GET', '/object/Queue/GLOBAL.Nightly')).body, /<ExecutionSize>9<\/ExecutionSize>/);
    });

    test('xml-put refuses bad input with a clear XML error and changes nothing', async () => {
      await t.xml('PUT', '/xml', { payload: queueXml('Steady'), headers: XML });
      const before = (await t.req('GET', '/Queue/GLOBAL.Steady')).body;
      const cases: Array<[string, string | Buffer, Record<string, string>, number, RegExp]> = [
        ['unknown element', queueXml('Steady', '<Colour>red</Colour>'), XML, 400, /Colour/],
        ['wrong type', queueXml('Steady').replace('<Held>false</Held>', '<Held>maybe</Held>'), XML, 400, /Held/],
        [
          'out of range',
          queueXml('Steady').replace('<ExecutionSize>4', '<ExecutionSize>-4'),
          XML,
          400,
          /ExecutionSize/,
        ],
        [
          'reference to nothing',
          queueXml('Steady', '<TimeWindow type="TimeWindow" path="GLOBAL.Nope"/>'),
          XML,
          400,
          /TimeWindow/,
        ],
        ['malformed', '<Queue><Name>Steady</Queue>', XML, 400, /Malformed/],
        ['unknown type', '<Gadget><Name>x</Name></Gadget>', XML, 400, /Gadget/],
        ['runtime type', '<Job/>', XML, 400, /Job/],
        ['no name', '<Queue><Description>x</Description></Queue>', XML, 400, /Name/],
        ['JSON content type', queueXml('Steady'), { 'content-type': 'application/json' }, 415, /application\/xml/],
        ['UTF-16 charset', queueXml('Steady'), { 'content-type': 'application/xml; charset=utf-16' }, 415, /UTF-8/],
        ['UTF-16 body', Buffer.from(`\ufeff${queueXml('Steady')}`, 'utf16le'), XML, 400, /UTF-8/],
        ['empty', '', XML, 400, /empty/],
      ];
      for (const [what, payload, headers, status, pattern] of cases) {
        const res = await t.xml('PUT', '/xml', { payload, headers });
        assertError(res, status, pattern);
        assert.equal((await t.req('GET', '/Queue/GLOBAL.Steady')).body, before, `${what} changed the queue`);
      }
      assertError(await t.xml('PUT', '/xml', { payload: 'x'.repeat(1024 * 1024 + 10), headers: XML }), 413);
      assertError(
        await t.xml('PUT', '/xml', {
          payload: queueXml('Steady'),
          headers: XML,
          auth: ['viewer', 'viewer-password-1'],
        }),
        403,
        /Edit/,
      );
    });

    test('list shows what the caller may view, with search, check and a stylesheet', async () => {
      for (const name of ['ListA', 'ListB', 'Other'])
        await t.xml('PUT', '/xml', { payload: queueXml(name), headers: XML });
      const all = parseXml((await t.xml('GET', '/list/Queue')).body);
      assert.equal(all.name, 'rest-list');
      assert.equal(all.attributes.type, 'Queue');
      const keys = all.children.map((c) => text(c, 'business-key'));
      assert.equal(all.attributes.count, String(keys.length));
      assert.ok(keys.includes('Queue:GLOBAL.Default') && keys.includes('Queue:GLOBAL.ListA'));
      const searched = parseXml((await t.xml('GET', '/list/Queue?search=lista')).body);
      assert.deepEqual(
        searched.children.map((c) => text(c, 'business-key')),
        ['Queue:GLOBAL.ListA'],
      );
      assert.equal(text(searched.children[0] as XmlElement, 'url'), `${t.xmlBase}/object/Queue/GLOBAL.ListA`);
      const exportable = parseXml((await t.xml('GET', '/list/Queue?check=export')).body).children.map((c) =>
        text(c, 'business-key'),
      );
      assert.ok(!exportable.includes('Queue:GLOBAL.System'), 'built-in objects are not exported');
      assert.ok(exportable.includes('Queue:GLOBAL.ListB'));
      const styled = await t.xml('GET', '/list/Queue?stylesheet=true');
      assert.match(styled.body, /<\?xml-stylesheet type="text\/xsl" href="[^"]*\/api-rest\/stylesheet"\?>/);
      assert.equal((await t.xml('GET', '/stylesheet')).status, 200);
      const viewerSees = parseXml(
        (await t.xml('GET', '/list/JobDefinition', { auth: ['viewer', 'viewer-password-1'] })).body,
      );
      assert.equal(viewerSees.attributes.count, '0');
      assertError(await t.xml('GET', '/list/Queue?check=maybe'), 400, /check/);
      assertError(await t.xml('GET', '/list/Queue?stylesheet=yes'), 400, /stylesheet/);
      assertError(await t.xml('GET', '/list/Gadget'), 404);
    });

    test('a list asked again is the same until an object changes; each caller gets the list of what it may view', async () => {
      assert.equal((await t.req('POST', '/Partition/Cached', { body: {} })).status, 201);
      assert.equal((await t.req('POST', '/Queue/Cached.Q1', { body: {} })).status, 201);
      const keys = (body: string) => parseXml(body).children.map((c) => text(c, 'business-key'));
      const first = await t.xml('GET', '/list/Queue');
      assert.equal((await t.xml('GET', '/list/Queue')).body, first.body);
      assert.ok(keys(first.body).includes('Queue:Cached.Q1'));
      // The viewer may view GLOBAL's queues only: the admin's list, just written, is not its answer.
      const viewer = keys((await t.xml('GET', '/list/Queue', { auth: ['viewer', 'viewer-password-1'] })).body);
      assert.ok(viewer.includes('Queue:GLOBAL.Default') && !viewer.includes('Queue:Cached.Q1'));
      assert.equal((await t.req('POST', '/Queue/Cached.Q2', { body: {} })).status, 201);
      assert.ok(keys((await t.xml('GET', '/list/Queue')).body).includes('Queue:Cached.Q2'), 'a new object shows');
      assert.equal((await t.req('DELETE', '/Queue/Cached.Q1')).status, 204);
      assert.ok(!keys((await t.xml('GET', '/list/Queue')).body).includes('Queue:Cached.Q1'), 'a deleted one goes');
    });

    test('a wrong method is an XML 405 naming the allowed ones; an unknown path an XML 404', async () => {
      const res = await t.xml('DELETE', '/version');
      assertError(res, 405);
      assert.equal(res.headers.allow, 'GET');
      assertError(await t.xml('GET', '/nothing-here'), 404);
    });
  });
}
