import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { elementToBody, itemName, objectToElement, objectToXml, typeOfElement } from '../../../src/car/object-xml.ts';
import { el, parseXml, serializeXml } from '../../../src/car/xml.ts';
import { MillraceError } from '../../../src/errors.ts';
import { type Field, type FieldKind, field, list, NAME_PATTERN, string } from '../../../src/model/fields.ts';
import { defineType, type KeyShape, type ObjectType } from '../../../src/model/object-type.ts';
import { allTypes, keyShapeOf, requireType } from '../../../src/model/registry.ts';
import { renderObject } from '../../../src/model/render.ts';
import { validateObjectBody } from '../../../src/model/validate.ts';
import { isPlainObject } from '../../../src/domain/json.ts';
import { formatInstant, parseDate } from '../../../src/time/date-format.ts';

const Queue = requireType('Queue');
const at = (iso: string, zone: string) => ({ ms: Date.parse(iso), zone });
const validate = (type: ObjectType, body: unknown) =>
  validateObjectBody(type, body, { mode: 'create', defaultZone: 'UTC', keyShapeOf });

const rejects = (fn: () => unknown, message: RegExp): void => {
  assert.throws(fn, (e: unknown) => e instanceof MillraceError && e.status === 400 && message.test(e.message));
};
/** Reads an object document the way xml-put does. */
const read = (xml: string) => {
  const root = parseXml(xml);
  return elementToBody(typeOfElement(root), root);
};

test('a Queue is written with the elements of the XML interface, in its order, read-only times last', () => {
  const stored = {
    Comment: null,
    Description: 'Night batch',
    Name: 'Nightly',
    Partition: 'GLOBAL',
    ParentApplication: null,
    ExecutionSize: 4,
    Held: false,
    HoldLevel: null,
    Inclusive: true,
    InclusiveConsoleJobs: false,
    Overdue: false,
    QueueTimeZone: 'Europe/Amsterdam',
    TimeWindow: 'GLOBAL.Office_Hours',
    CreationTime: at('2026-11-21T08:30:00Z', 'Europe/Amsterdam'),
    LastModificationTime: at('2026-11-22T10:00:00.250Z', 'UTC'),
  };
  const xml = objectToXml(Queue, stored);
  assert.equal(
    xml,
    `<?xml version="1.0" encoding="UTF-8"?>
<Queue>
  <Comment/>
  <Description>Night batch</Description>
  <Name>Nightly</Name>
  <Partition type="Partition" path="GLOBAL"/>
  <ParentApplication/>
  <ExecutionSize>4</ExecutionSize>
  <Held>false</Held>
  <HoldLevel/>
  <Inclusive>true</Inclusive>
  <InclusiveConsoleJobs>false</InclusiveConsoleJobs>
  <Overdue>false</Overdue>
  <QueueTimeZone>Europe/Amsterdam</QueueTimeZone>
  <TimeWindow type="TimeWindow" path="GLOBAL.Office_Hours"/>
  <CreationTime>2026/11/21 09:30:00,000 Europe/Amsterdam</CreationTime>
  <LastModificationTime>2026/11/22 10:00:00,250 UTC</LastModificationTime>
</Queue>
`,
  );
  // GET object → xml-put works unchanged: the read-only times are skipped and the rest validates back.
  const body = read(xml);
  assert.ok(!('CreationTime' in body) && !('LastModificationTime' in body));
  const { CreationTime: _c, LastModificationTime: _l, ...writable } = stored;
  assert.deepEqual(validate(Queue, body), writable);
});

test('a hand-written Queue for xml-put: blank values are null, missing elements take their defaults', () => {
  const body = read(`<Queue>
  <Comment></Comment>
  <Name>Nightly</Name>
  <Partition type="Partition" path="GLOBAL"/>
  <ExecutionSize> 4 </ExecutionSize>
  <Held>true</Held>
</Queue>`);
  assert.deepEqual(body, { Comment: null, Name: 'Nightly', Partition: 'GLOBAL', ExecutionSize: 4, Held: true });
  assert.equal(validate(Queue, body).Overdue, false);
});

test('a Credential never shows its Password; a Password element is accepted as input', () => {
  const Credential = requireType('Credential');
  const stored = { Name: 'Db', Partition: 'GLOBAL', RealUser: 'scott', Password: 'tiger-secret', Protocol: 'login' };
  const xml = objectToXml(Credential, stored);
  assert.ok(!xml.includes('Password') && !xml.includes('tiger-secret'), xml);
  assert.ok(xml.includes('<RealUser>scott</RealUser>'));
  const body = read(xml.replace('</Credential>', '  <Password>new &amp; secret</Password>\n</Credential>'));
  assert.equal(body.Password, 'new & secret');
});

test('lists are wrappers of item elements, records hold their fields, derived and read-only are skipped', () => {
  const ps = requireType('ProcessServer');
  const xml = objectToXml(ps, {
    Name: 'Local',
    Partition: 'GLOBAL',
    Status: 'Running',
    DefinitionTypes: ['BASH', 'NODE'],
    QueueProviders: ['GLOBAL.Local.GLOBAL.Default'],
    AgentSecret: 'never shown',
  });
  assert.match(xml, /<DefinitionTypes>\n {4}<DefinitionType>BASH<\/DefinitionType>\n {4}<DefinitionType>NODE</);
  assert.match(xml, /<QueueProvider type="QueueProvider" path="GLOBAL.Local.GLOBAL.Default"\/>/);
  assert.ok(!xml.includes('AgentSecret'));
  const body = read(xml);
  assert.deepEqual(body.DefinitionTypes, ['BASH', 'NODE']);
  assert.ok(!('Status' in body) && !('QueueProviders' in body) && !('DesiredStatus' in body));
  const full = elementToBody(ps, parseXml(xml), { includeReadOnly: true });
  assert.equal(full.Status, 'Running');
  assert.deepEqual(full.QueueProviders, ['GLOBAL.Local.GLOBAL.Default']);

  const jd = objectToElement(requireType('JobDefinition'), {
    Parameters: [{ Name: 'P', Direction: 'In', DataType: 'String', DefaultValue: ' x ', Optional: false }],
    RestartBehaviour: { Completed: 'Continue', Error: 'Restart' },
    Locks: [],
  });
  const child = (name: string) => jd.children.find((c) => c.name === name);
  assert.deepEqual(child('Locks'), el('Locks'));
  assert.deepEqual(child('Parameters')?.children[0]?.children.slice(0, 4), [
    el('Name', 'P'),
    el('Direction', 'In'),
    el('DataType', 'String'),
    el('DefaultValue', ' x '),
  ]);
  assert.deepEqual(
    child('RestartBehaviour')?.children.map((c) => c.text),
    ['Continue', 'Restart', '', '', ''],
  );
});

test('itemName drops the trailing s, "es" after ss/us, and gives Item otherwise', () => {
  const cases: Array<[string, string]> = [
    ['Parameters', 'Parameter'],
    ['WaitEvents', 'WaitEvent'],
    ['Files', 'File'],
    ['Includes', 'Include'],
    ['Responses', 'Response'],
    ['Statuses', 'Status'],
    ['Addresses', 'Address'],
    ['Data', 'Item'],
    ['s', 'Item'],
  ];
  for (const [f, item] of cases) assert.equal(itemName(f), item, f);
});

test('typeOfElement takes the type from the root element; an unknown root is 400', () => {
  assert.equal(typeOfElement(el('JobChain')).name, 'JobChain');
  rejects(() => typeOfElement(el('Nonsense')), /root element Nonsense is not an object type/);
  rejects(() => typeOfElement(el('__proto__')), /not an object type/);
  rejects(() => elementToBody(Queue, el('Lock')), /root element is Lock; it must be Queue/);
});

const JD = `<JobDefinition>
  <Name>Load</Name>
  <Parameters>
    <Parameter><Name>A</Name></Parameter>
    <Parameter><Name>B</Name>{P2}</Parameter>
  </Parameters>
  {MORE}
</JobDefinition>`;
const jd = (p2: string, more = '') => read(JD.replace('{P2}', p2).replace('{MORE}', more));

test('bad elements are refused with 400 naming the element path', () => {
  const cases: Array<[() => unknown, RegExp]> = [
    [
      () => jd('<DataType>Number</DataType><DataType>Date</DataType>'),
      /"Parameters\/Parameter\[2\]\/DataType" is repeated/,
    ],
    [() => jd('<Colour>red</Colour>'), /"Parameters\/Parameter\[2\]\/Colour" is not a field of Parameter/],
    [() => jd('<Optional>yes</Optional>'), /"Parameters\/Parameter\[2\]\/Optional" must be true or false, not "yes"/],
    [() => jd('<DisplayOrder>0x10</DisplayOrder>'), /"Parameters\/Parameter\[2\]\/DisplayOrder" must be a number/],
    [() => jd('<DisplayOrder>1e999</DisplayOrder>'), /must be a number/],
    [() => jd('<Description><b/></Description>'), /"Parameters\/Parameter\[2\]\/Description" must hold text/],
    [() => jd('', '<Name>Again</Name>'), /"Name" is repeated/],
    [() => jd('', '<Nonsense/>'), /"Nonsense" is not a field of JobDefinition/],
    [() => jd('', '<DefaultQueue type="Queue"/>'), /"DefaultQueue" has no path attribute/],
    [() => jd('', '<DefaultQueue>GLOBAL.Default</DefaultQueue>'), /"DefaultQueue" must be an empty element/],
    [
      () => jd('', '<DefaultQueue type="Lock" path="GLOBAL.Default"/>'),
      /"DefaultQueue" has type="Lock"; it references a Queue/,
    ],
    [() => jd('', '<Locks><Item type="Lock" path="L"/></Locks>'), /"Locks\/Item\[1\]" must be named Lock/],
    [() => jd('', '<Locks>L1</Locks>'), /"Locks" holds text; it must hold one element per item/],
    [() => jd('', '<RestartBehaviour>Restart</RestartBehaviour>'), /"RestartBehaviour" holds text/],
    [() => jd('', '<RestartBehaviour><Error>Restart</Error>oops</RestartBehaviour>'), /"RestartBehaviour" holds text/],
    [() => read('<Queue>text</Queue>'), /"Queue" holds text/],
  ];
  for (const [fn, message] of cases) rejects(fn, message);
  // Empty elements are null; a reference without attributes is null too.
  const ok = jd('<DataType/><DisplayOrder>  </DisplayOrder>', '<DefaultQueue/><Locks/>');
  assert.deepEqual(ok.Parameters, [{ Name: 'A' }, { Name: 'B', DataType: null, DisplayOrder: null }]);
  assert.equal(ok.DefaultQueue, null);
  assert.deepEqual(ok.Locks, []);
});

test('a list of lists names the inner items Item', () => {
  const Grid = defineType({
    name: 'Lock',
    description: 'test only',
    key: 'partitioned',
    fields: [field('Rows', list(list(string(10))))],
  });
  const element = objectToElement(Grid, { Rows: [['a', 'b'], []] });
  const rows = element.children.find((c) => c.name === 'Rows');
  assert.deepEqual(rows, el('Rows', [el('Row', [el('Item', 'a'), el('Item', 'b')]), el('Row')]));
  assert.deepEqual(elementToBody(Grid, parseXml(serializeXml(element))).Rows, [['a', 'b'], []]);
});

// ---------------------------------------------------------------------------------------------
// Property: every registry type round-trips. Values are generated from the field declarations alone.

const ZONES = ['UTC', 'Europe/Amsterdam', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'];
const MIN_MS = Date.UTC(1971, 0, 1);
const MAX_MS = Date.UTC(2100, 11, 31, 23, 59, 59, 999);
/** True when every character is one XML 1.0 can carry (the test must not generate the others). */
const xmlLegal = (s: string): boolean =>
  [...s].every((ch) => {
    const n = ch.codePointAt(0) ?? 0;
    return (
      n === 9 || n === 10 || n === 13 || (n >= 0x20 && n <= 0xd7ff) || (n >= 0xe000 && n <= 0xfffd) || n >= 0x10000
    );
  });

const char = (multiLine: boolean) =>
  fc
    .oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
      fc.constantFrom(
        ' ',
        '\t',
        '&',
        '<',
        '>',
        '"',
        ']]>',
        '&lt;',
        '\u0085',
        '\u007f',
        ...(multiLine ? ['\r\n', '\r', '\n'] : []),
      ),
    )
    .map((c) => (!xmlLegal(c) || (!multiLine && /[\r\n]/.test(c)) ? '?' : c));

const name = fc.stringMatching(NAME_PATTERN);
const keyOf: Record<KeyShape, fc.Arbitrary<string>> = {
  name,
  partitioned: fc.tuple(name, name).map((p) => p.join('.')),
  queueProvider: fc.tuple(name, name, name, name).map((p) => p.join('.')),
  numeric: fc.bigInt({ min: 1n, max: 10n ** 16n - 1n }).map(String),
  eventId: fc.tuple(name, fc.integer({ min: 0, max: 99_999 })).map(([n, i]) => `${n}${i}`),
};

const integer = (min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) =>
  fc
    .oneof(fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) }), fc.maxSafeInteger())
    .filter((n) => n >= min && n <= max);

/** A stored value of a kind; never null (nulls are added per field by `fieldsArb`). */
function valueArb(kind: FieldKind): fc.Arbitrary<unknown> {
  switch (kind.kind) {
    case 'string':
      if (kind.pattern) {
        const pattern = kind.pattern;
        return fc
          .stringMatching(pattern)
          .map((s) => s.replace(/[\r\n\v\f]/g, ' '))
          .filter((s) => s.length > 0 && s.length <= kind.maxLength && pattern.test(s) && xmlLegal(s));
      }
      return fc.string({ unit: char(false), minLength: 1, maxLength: 40 }).filter((s) => s.length <= kind.maxLength);
    case 'text':
    case 'secret':
      return fc.string({ unit: char(true), minLength: 1, maxLength: 40 }).filter((s) => s.length <= kind.maxLength);
    case 'number':
      return kind.integer
        ? integer(kind.min, kind.max)
        : fc.double({ noNaN: true, noDefaultInfinity: true, min: kind.min, max: kind.max }).map((n) => n + 0); // -0 is written 0
    case 'boolean':
      return fc.boolean();
    case 'enum':
      return fc.constantFrom(...kind.values);
    case 'timezone':
      return fc.constantFrom(...ZONES);
    case 'date':
      // Through its own text once: the later instant of a DST overlap has no offset-free text (date-format.ts).
      return fc
        .tuple(fc.integer({ min: MIN_MS, max: MAX_MS }), fc.constantFrom(...ZONES))
        .map(([ms, zone]) => parseDate(formatInstant(ms, zone), zone));
    case 'reference':
      return keyOf[keyShapeOf(kind.type)];
    case 'record':
      return fieldsArb(kind.fields);
    case 'list':
      return fc.array(valueArb(kind.of), { maxLength: Math.min(3, kind.maxItems) });
    case 'map': {
      const key = fc
        .stringMatching(kind.keyPattern)
        .filter((k) => k.length > 0 && k.length <= kind.keyMaxLength)
        .map((k) => k.toLowerCase());
      const entry = fc.tuple(
        key,
        fc.string({ unit: char(false), maxLength: 40 }).filter((s) => s.length <= kind.valueMaxLength),
      );
      // Names distinct ignoring case (lower-cased above), `__proto__` among them at times; built as own properties.
      return fc
        .uniqueArray(
          fc.oneof(entry, fc.tuple(fc.constant('__proto__'), fc.string({ unit: char(false), maxLength: 5 }))),
          {
            selector: ([k]) => k,
            maxLength: Math.min(3, kind.maxEntries),
          },
        )
        .map((entries) => Object.fromEntries(entries));
    }
    case 'scalar': // input only (a form's field): no stored object holds one
      throw new Error('a stored object has no scalar field');
  }
}

/** Every field but secrets; optional scalars and records are sometimes null, lists and maps are always there. */
function fieldsArb(fields: readonly Field[]): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of fields) {
    if (f.kind.kind === 'secret') continue;
    const v = valueArb(f.kind);
    model[f.name] = f.required || f.kind.kind === 'list' || f.kind.kind === 'map' ? v : fc.option(v, { nil: null });
  }
  return fc.record(model, { noNullPrototype: true });
}

const writable = (type: ObjectType, v: Record<string, unknown>) =>
  Object.fromEntries(
    type.fields.filter((f) => !f.readOnly && !f.derived && f.kind.kind !== 'secret').map((f) => [f.name, v[f.name]]),
  );

describe('property: every registry type round-trips through its object XML', () => {
  for (const type of allTypes()) {
    test(type.name, () => {
      fc.assert(
        fc.property(fieldsArb(type.fields), (stored) => {
          const root = parseXml(objectToXml(type, stored));
          assert.equal(typeOfElement(root), type);
          // Read whole, it is the JSON form of the object (what renderObject gives).
          const {
            uniqueId: _u,
            businessKey: _b,
            ...json
          } = renderObject(type, { uniqueId: 1, businessKey: 'k' }, stored);
          assert.deepEqual(elementToBody(type, root, { includeReadOnly: true }), json);
          const body = elementToBody(type, root);
          if (type.storage === 'runtime') {
            // Runtime objects are all read-only: nothing of theirs can be put.
            assert.deepEqual(body, writable(type, json));
            return;
          }
          assert.deepEqual(writable(type, validate(type, body)), writable(type, stored));
        }),
        { numRuns: 100 },
      );
    });
  }
});

test('an HTTP and a SQL definition go through XML and back unchanged', () => {
  const jd = requireType('JobDefinition');
  for (const data of [
    {
      JobDefinitionType: 'HTTP',
      Http: {
        Method: 'POST',
        Url: 'https://api.example.com/orders/${ID}',
        // JSON.parse makes `__proto__` an own name, as a request body's parser does.
        Headers: JSON.parse('{"X-A": "a & <b>", "Accept": "application/json", "constructor": "", "__proto__": "x"}'),
        Body: '{"id": "${ID}"}',
        Credential: 'GLOBAL.Api',
        ExpectStatus: '200-299,304',
        TimeoutSeconds: 30,
        FollowRedirects: false,
      },
      Parameters: [{ Name: 'ORDER_ID', Direction: 'Out', JsonPath: '$.items[0].id' }],
    },
    {
      JobDefinitionType: 'SQL',
      Sql: {
        Credential: 'GLOBAL.Db',
        Database: 'postgres://db:5432/x',
        Script: 'SELECT :ID;\nSELECT 2',
        Transaction: false,
      },
    },
  ]) {
    const stored = validate(jd, { Name: 'Request', Partition: 'GLOBAL', ...data });
    const again = validate(
      jd,
      read(objectToXml(jd, renderObject(jd, { uniqueId: 1, businessKey: 'k' }, stored as Record<string, unknown>))),
    );
    assert.deepEqual(again, stored);
  }
});

test("an HTTP definition's headers are an object in JSON and Header elements named by attribute in XML", () => {
  const jd = requireType('JobDefinition');
  const headers = JSON.parse('{"Accept": "application/json", "__proto__": "x", "constructor": "y"}');
  const stored = validate(jd, {
    Name: 'Request',
    Partition: 'GLOBAL',
    JobDefinitionType: 'HTTP',
    Http: { Url: 'http://x/', Headers: headers },
  });
  const rendered = renderObject(jd, { uniqueId: 1, businessKey: 'k' }, stored);
  const http = rendered.Http;
  assert.ok(isPlainObject(http) && isPlainObject(http.Headers));
  assert.equal(Object.getPrototypeOf(http.Headers), Object.prototype);
  assert.deepEqual(Object.entries(http.Headers), [
    ['Accept', 'application/json'],
    ['__proto__', 'x'],
    ['constructor', 'y'],
  ]);
  const xml = objectToXml(jd, rendered);
  assert.match(
    xml.replace(/>\s+</g, '><'),
    /<Headers><Header name="Accept">application\/json<\/Header><Header name="__proto__">x<\/Header><Header name="constructor">y<\/Header><\/Headers>/,
  );
  const back = read(xml);
  assert.ok(isPlainObject(back.Http) && isPlainObject(back.Http.Headers));
  assert.ok(Object.hasOwn(back.Http.Headers, '__proto__'));
  assert.equal(Object.getPrototypeOf(back.Http.Headers), Object.prototype);
  assert.deepEqual(validate(jd, back), stored);
});
