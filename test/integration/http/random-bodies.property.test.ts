import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FieldKind } from '../../../src/model/fields.ts';
import { allTypes, definitionTypes } from '../../../src/model/registry.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { type BodyRoute, bodyRoutes } from '../../helpers/body-routes.ts';
import { type Response, startTestServer, type TestServer } from '../../helpers/server.ts';
import { changedTables, firstDifference, type StateSnapshots, stateSnapshots } from '../../helpers/state-snapshot.ts';

/**
 * Random bodies to every route that takes one, as an attacker or a broken client would send them: JSON objects
 * whose fields are those the registry declares for every type and form (nested ones too), every name each
 * JavaScript object inherits (`constructor`, `toString`, `__proto__` …) and odd ones, holding values of every
 * type, nested, huge numbers and odd strings; and XML documents of the same names to the XML interface's PUT
 * services. Every answer is 2xx or 4xx in the interface's own record, never 5xx, and a refused request changes
 * nothing stored (every table compared before and after). Seeded, so it never fails by chance; the in-process
 * server (inject) keeps thousands of cases within seconds.
 */

const SEED = 20_261_126;
/** Cases on SQLite; PostgreSQL, whose snapshots cost more, runs a fifth of them. */
const JSON_RUNS = 2400;
const XML_RUNS = 600;

/** Every field name the registry declares, at any depth, for every type and every form. */
function registryNames(): string[] {
  const names = new Set<string>(['uniqueId', 'businessKey', 'jobId', 'eventId']);
  const walk = (kind: FieldKind): void => {
    if (kind.kind === 'record')
      for (const f of kind.fields) {
        names.add(f.name);
        walk(f.kind);
      }
    if (kind.kind === 'list') walk(kind.of);
  };
  for (const type of allTypes()) {
    for (const f of type.fields) {
      names.add(f.name);
      walk(f.kind);
    }
    for (const form of Object.values(type.forms))
      for (const f of form.fields) {
        names.add(f.name);
        walk(f.kind);
      }
  }
  return [...names];
}

const INHERITED = Object.getOwnPropertyNames(Object.prototype);
const NAMES = registryNames();

const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES) },
  { weight: 3, arbitrary: fc.constantFrom(...INHERITED) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

/** Strings a validator must not trip over. */
const oddString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\r\n',
    '\ud800',
    '\ufffe',
    'x'.repeat(5000),
    '2026/11/26 09:30:00,000 Europe/Amsterdam',
    '2026-02-30T25:61:00Z',
    'GLOBAL.Default',
    'GLOBAL.System_Sleep',
    'Finance.Batch',
    'Job:1',
    'Completed',
    'Error',
    'Europe/Amsterdam',
    'Nowhere/Zone',
    '${constructor}',
    '${__proto__}',
    '.*',
    '(a+)+$',
    'constructor',
    '__proto__',
  ),
  fc.constantFrom(...NAMES),
);

/** Numbers JSON can carry, and some it cannot as a JavaScript number (written as raw text, see `serialize`). */
const HUGE = ['1e400', '-1e400', '123456789012345678901234567890', '1e-400', '-0', '9007199254740993'];
const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, Number.MAX_VALUE, -Number.MAX_VALUE),
  fc.constantFrom(...HUGE.map((h) => ({ raw: h }))),
);

const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    oddString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(name, tie('value'), { maxKeys: 4 }),
  ),
}));

/** A body: mostly an object of registry and inherited names; sometimes something that is not an object. */
const jsonBody = fc.oneof(
  { weight: 8, arbitrary: fc.dictionary(name, value, { maxKeys: 6 }) },
  { weight: 1, arbitrary: value },
  { weight: 1, arbitrary: fc.constantFrom('{"a": ', '[', '', '{"__proto__": {"x": 1}}', 'nul', '{"a": 1}}') },
);

/** JSON text of a generated value; `{raw}` numbers are written as their text, and strings of raw text sent as is. */
function serialize(body: unknown, asText: boolean): string {
  if (asText && typeof body === 'string') return body;
  const raws: string[] = [];
  const text = JSON.stringify(body, (_k, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'raw' in v) {
      raws.push((v as { raw: string }).raw);
      return `@@raw${raws.length - 1}@@`;
    }
    return v;
  });
  return (text ?? 'null').replace(/"@@raw(\d+)@@"/g, (_m, i: string) => raws[Number(i)] as string);
}

const escapeXml = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
const xmlName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES) },
  { weight: 2, arbitrary: fc.constantFrom(...INHERITED) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}$/) },
);
const { element } = fc.letrec<{ element: string }>((tie) => ({
  element: fc.oneof(
    { depthSize: 'small' },
    fc.tuple(xmlName, oddString).map(([n, text]) => `<${n}>${escapeXml(text)}</${n}>`),
    fc
      .tuple(xmlName, oddString, oddString)
      .map(([n, type, path]) => `<${n} type="${escapeXml(type)}" path="${escapeXml(path)}"/>`),
    xmlName.map((n) => `<${n}/>`),
    fc.tuple(xmlName, fc.array(tie('element'), { maxLength: 4 })).map(([n, kids]) => `<${n}>${kids.join('')}</${n}>`),
  ),
}));
/** An object XML document: the root a type (or not), its children fields (or not); sometimes broken. */
const xmlBody = fc.oneof(
  {
    // Named objects of simple types, so that some documents are stored (and changed again).
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('Queue', 'Lock', 'Application', 'EventDefinition'),
        fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/),
        fc.array(element, { maxLength: 2 }),
      )
      .map(
        ([root, n, kids]) =>
          `<${root}><Name>${n}</Name><Partition type="Partition" path="Finance"/>${kids.join('')}</${root}>`,
      ),
  },
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.oneof(fc.constantFrom(...definitionTypes().map((t) => t.name as string)), xmlName),
        fc.array(element, { maxLength: 6 }),
      )
      .map(([root, kids]) => `<?xml version="1.0" encoding="UTF-8"?>\n<${root}>${kids.join('')}</${root}>`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '<Queue><Name>X</Name>',
      '<!DOCTYPE Queue [<!ENTITY e "e">]><Queue>&e;</Queue>',
      '<Queue><Name>&constructor;</Name></Queue>',
      '<Queue xmlns:a="x"><a:Name>X</a:Name></Queue>',
      '',
      'not xml',
    ),
  },
);

/** What is wrong with a JSON answer, or undefined: 2xx or 4xx in the JSON record. */
function jsonAnswerProblem(res: Response): string | undefined {
  if (res.status >= 200 && res.status < 300) {
    if (res.status === 204) return undefined;
    return res.json === undefined ? 'a 2xx answer that is not JSON' : undefined;
  }
  if (res.status < 400 || res.status >= 500) return `status ${res.status}`;
  const keys = res.json ? Object.keys(res.json).sort().join(',') : '';
  if (keys !== 'code,message' || res.json.code !== String(res.status) || typeof res.json.message !== 'string')
    return 'a 4xx answer that is not the record {code, message}';
  return undefined;
}

function xmlAnswerProblem(res: Response): string | undefined {
  if (res.status >= 200 && res.status < 300)
    return /<message>/.test(res.body) ? undefined : 'a 2xx answer that is not a <message>';
  if (res.status < 400 || res.status >= 500) return `status ${res.status}`;
  const record = new RegExp(
    `^<\\?xml[^>]*>\\s*<error>\\s*<code>${res.status}</code>\\s*<message>[^<]*</message>\\s*</error>\\s*$`,
  );
  return record.test(res.body) ? undefined : 'a 4xx answer that is not the <error> record';
}

for (const backend of backends()) {
  const share = backend.name === 'sqlite' ? 1 : 5;
  describe(`random bodies to every route that takes one (${backend.name})`, () => {
    let t: TestServer;
    let routes: BodyRoute[];
    let snapshots: StateSnapshots;
    let baseline: Map<string, string>;

    /** What is stored once the engine has done what an accepted request set off (it may take a few turns). */
    const settled = async (): Promise<Map<string, string>> => {
      let last = await snapshots.take();
      for (let i = 0; i < 50; i++) {
        await t.server.engine.idle();
        await new Promise((r) => setTimeout(r, 30));
        const now = await snapshots.take();
        if (changedTables(last, now).length === 0) return now;
        last = now;
      }
      return last;
    };

    /** How many answers of each status: a run that accepts nothing would test little (shown with the results). */
    const answered = new Map<number, number>();

    /** Sends one request; 2xx or 4xx in the record, and a 4xx changed nothing. */
    const check = async (what: string, send: () => Promise<Response>, problem: (r: Response) => string | undefined) => {
      const res = await send();
      answered.set(res.status, (answered.get(res.status) ?? 0) + 1);
      const wrong = problem(res);
      assert.equal(wrong, undefined, `${what}: ${wrong}: ${res.status} ${res.body.slice(0, 300)}`);
      if (res.status >= 400) {
        const now = await snapshots.take();
        const changed = changedTables(baseline, now);
        assert.deepEqual(
          changed,
          [],
          `${what}: refused with ${res.status} (${res.body.slice(0, 200)}) but changed ${firstDifference(baseline, now, changed[0] ?? '')}`,
        );
      } else baseline = await settled();
    };

    before(async () => {
      // Time stands still: nothing changes stored state but the requests.
      t = await startTestServer(
        backend,
        { localAgent: false },
        { clock: new FakeClock(Date.parse('2026-11-26T09:00:00Z')) },
      );
      routes = (await bodyRoutes(t, ['admin'])).filter((r) => r.jsonBody);
      assert.ok(
        routes.every((r) => r.path !== undefined),
        'every route has a target',
      );
      snapshots = await stateSnapshots(t);
      baseline = await settled();
    });
    after(async () => {
      await snapshots?.close();
      await t?.close();
    });

    test('JSON: every answer 2xx or 4xx in the JSON record; a refused body changes nothing', async (ctx) => {
      answered.clear();
      assert.ok(routes.length >= 20, `${routes.length} routes take a JSON body`);
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...routes), jsonBody, async (route, body) => {
          const text = serialize(body, true);
          await check(
            `${route.method} ${route.path} ${text.slice(0, 200)}`,
            () =>
              t.req(route.method, route.path as string, {
                payload: text,
                headers: { 'content-type': 'application/json' },
              }),
            jsonAnswerProblem,
          );
        }),
        { seed: SEED, numRuns: Math.ceil(JSON_RUNS / share), endOnFailure: true },
      );
      ctx.diagnostic(`answers by status: ${JSON.stringify(Object.fromEntries([...answered].sort()))}`);
      assert.ok(
        [...answered.keys()].some((s) => s < 300),
        'some bodies were accepted',
      );
    });

    test('XML: every answer 2xx or 4xx in the <error> record; a refused document changes nothing', async (ctx) => {
      answered.clear();
      const wadl = (await t.xml('GET', '/capabilitiesxml')).body;
      const services = [...wadl.matchAll(/<resource path="([^"]+)">(?:(?!<\/resource>).)*?<method name="PUT"/gs)].map(
        (m) => `/${m[1]}`,
      );
      assert.deepEqual(services.sort(), ['/car', '/jar', '/xml'], 'the PUT services of the WADL');
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...services), xmlBody, async (service, body) => {
          await check(
            `PUT ${service} ${body.slice(0, 200)}`,
            () =>
              t.xml('PUT', service, {
                payload: body,
                headers: {
                  'content-type': 'application/xml; charset=utf-8',
                  'X-Vendor-Library': 'Finance.Helpers',
                  'X-Vendor-FileName': 'a.jar',
                },
              }),
            xmlAnswerProblem,
          );
        }),
        { seed: SEED, numRuns: Math.ceil(XML_RUNS / share), endOnFailure: true },
      );
      ctx.diagnostic(`answers by status: ${JSON.stringify(Object.fromEntries([...answered].sort()))}`);
    });
  });
}
