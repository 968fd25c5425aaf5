import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { describeType, TYPE_DESCRIPTIONS } from '../../../src/http/ui/type-descriptions.ts';
import { keyShapeOf, requireType } from '../../../src/model/registry.ts';
import { validateObjectBody } from '../../../src/model/validate.ts';
import { errorMessage } from '../../../src/errors.ts';

/**
 * The pure part of the console's definition forms (src/ui/static/app/definition-values.js, a plain browser module):
 * widgets chosen from the registry's kinds, a value as text and back, the diff of an edit and its PUT body, and the
 * field a message of the server's validator names.
 */

// A path the type checker does not follow: the module is plain JavaScript without declarations.
const VALUES = new URL('../../../src/ui/static/app/definition-values.js', import.meta.url).href;
// biome-ignore lint/suspicious/noExplicitAny: the module is untyped JavaScript
const v: any = await import(VALUES);

const JD = describeType(requireType('JobDefinition'));
const kindOf = (name: string) => JD.fields.find((f) => f.name === name)?.kind;

/** The message the server's validator gives for a body. */
function refusal(type: string, body: unknown): string {
  try {
    validateObjectBody(requireType(type as 'Queue'), body, { mode: 'create', defaultZone: 'UTC', keyShapeOf });
  } catch (e) {
    return errorMessage(e);
  }
  throw new Error('the body was accepted');
}

test('every field a body may set gets a widget; only lists of records, lists and maps are JSON text', () => {
  const json: string[] = [];
  for (const type of TYPE_DESCRIPTIONS)
    for (const f of v.editable(type.fields)) {
      const w = v.widgetOf(f.kind);
      assert.ok(w, `${type.name}.${f.name}`);
      if (w === 'json') {
        json.push(`${type.name}.${f.name}`);
        assert.equal(f.kind.kind, 'list');
        assert.ok(['record', 'list', 'map'].includes(f.kind.of.kind), `${type.name}.${f.name}`);
      }
    }
  assert.ok(json.includes('JobDefinition.Parameters'));
  assert.ok(json.includes('TimeWindow.Elements'));
  assert.equal(v.widgetOf(kindOf('Locks')), 'lines');
  assert.equal(v.widgetOf(kindOf('Priority')), 'number');
  assert.equal(v.widgetOf(kindOf('JobDefinitionType')), 'select');
  assert.equal(v.widgetOf(kindOf('DefaultQueue')), 'reference');
  assert.equal(v.widgetOf(kindOf('Script')), 'textarea');
  assert.ok(
    v.editable(JD.fields).every((f: { name: string }) => !['CreationTime', 'LastModificationTime'].includes(f.name)),
  );
});

test('a text becomes the value it stands for; what does not read as a number is sent as typed', () => {
  const priority = kindOf('Priority');
  assert.deepEqual(v.fromText(priority, ' 60 '), { value: 60 });
  assert.deepEqual(v.fromText(priority, '500'), { value: 500 });
  assert.deepEqual(v.fromText(priority, 'ten'), { value: 'ten' });
  assert.deepEqual(v.fromText(priority, ''), { value: null });
  assert.deepEqual(v.fromText(kindOf('HoldOnSubmit'), 'true'), { value: true });
  assert.deepEqual(v.fromText(kindOf('Locks'), 'GLOBAL.A\n\n  GLOBAL.B \n'), { value: ['GLOBAL.A', 'GLOBAL.B'] });
  assert.deepEqual(v.fromText(kindOf('Script'), 'echo a\n  echo b\n'), { value: 'echo a\n  echo b\n' });
  assert.match(v.fromText(kindOf('Parameters'), '[{"Name": ').problem, /is not valid JSON/);
  const headers = { kind: 'map', maxEntries: 50, keyPatternText: '' };
  assert.deepEqual(v.fromText(headers, 'Accept: application/json\nX-Url: http://a:1/b'), {
    value: { Accept: 'application/json', 'X-Url': 'http://a:1/b' },
  });
  assert.match(v.fromText(headers, 'no colon here').problem, /"Name: value"/);
});

test('lists, maps and JSON come back from their text as they were', () => {
  const line = fc.stringMatching(/^[A-Za-z0-9_.][A-Za-z0-9_. :/-]{0,20}[A-Za-z0-9_./-]$|^[A-Za-z0-9]$/);
  const headers = { kind: 'map', maxEntries: 50, keyPatternText: '' };
  fc.assert(
    fc.property(
      fc.array(line, { maxLength: 8 }),
      fc.dictionary(fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/), line, { maxKeys: 6 }),
      fc.jsonValue(),
      (items, map, json) => {
        // Empty is null: the server stores an empty list and none alike.
        assert.deepEqual(
          v.fromText(kindOf('Locks'), v.toText(kindOf('Locks'), items)).value,
          items.length ? items : null,
        );
        assert.deepEqual(
          v.fromText(headers, v.toText(headers, map)).value,
          Object.keys(map).length ? { ...map } : null,
        );
        const back = v.fromText(kindOf('Parameters'), v.toText(kindOf('Parameters'), json)).value;
        assert.deepEqual(back, JSON.parse(JSON.stringify(json)));
      },
    ),
    { numRuns: 300, seed: 20261126 },
  );
});

test("an edit's diff names each changed field, a record's fields one by one; the PUT holds only those", () => {
  const before = {
    Name: 'Nightly',
    Description: null,
    Priority: 60,
    Script: 'echo a',
    Locks: [],
    Http: null,
    RestartBehaviour: { Completed: 'Continue', Error: 'Continue' },
    CreationTime: '2026/11/26 10:00:00,000 UTC',
  };
  const after = {
    Description: 'Greets',
    Priority: 60,
    Script: 'echo b',
    Locks: null,
    Http: null,
    RestartBehaviour: { Completed: 'Continue', Error: 'Restart' },
  };
  assert.deepEqual(v.diff(JD.fields, before, after), [
    { field: 'Description', before: '(empty)', after: 'Greets' },
    { field: 'Script', before: 'echo a', after: 'echo b' },
    { field: 'RestartBehaviour.Error', before: 'Continue', after: 'Restart' },
  ]);
  assert.deepEqual(v.changes(JD.fields, before, after), {
    Description: 'Greets',
    Script: 'echo b',
    RestartBehaviour: { Completed: 'Continue', Error: 'Restart' },
  });
  assert.deepEqual(v.diff(JD.fields, before, { Priority: 60, Locks: [] }), [], 'nothing changed, nothing to save');
  assert.deepEqual(v.changes(JD.fields, before, { Script: null }), { Script: null }, 'an emptied field is cleared');
  const credential = describeType(requireType('Credential'));
  assert.deepEqual(v.diff(credential.fields, { Password: undefined }, { Password: 'new' }), [
    { field: 'Password', before: '(hidden)', after: '(a new value)' },
  ]);
});

test("the field a server's 400 names is found, and shown at the nearest widget", () => {
  const identity = ['Partition', 'Name'];
  assert.equal(v.fieldOfMessage(refusal('JobDefinition', { Name: 'X', Priority: 500 }), identity), 'Priority');
  assert.equal(
    v.fieldOfMessage(refusal('JobDefinition', { Name: 'X', Parameters: [{ Name: 'A', DataType: 'Text' }] }), identity),
    'Parameters[0].DataType',
  );
  assert.equal(
    v.fieldOfMessage(refusal('JobDefinition', { Name: 'X', Http: { Url: 'a', Headers: { 'a b': 'x' } } }), identity),
    'Http.Headers.a b',
  );
  assert.equal(v.fieldOfMessage('"GLOBAL.a b" is not a JobDefinition key: <partition>.<name>', identity), 'Name');
  assert.equal(v.fieldOfMessage('You need the Edit privilege to change it', identity), null);
  const widgets = new Set(['Parameters', 'Http', 'Http.Headers', 'Http.Url']);
  const has = (p: string) => widgets.has(p);
  assert.equal(v.widgetPath('Parameters[0].DataType', has), 'Parameters');
  assert.equal(v.widgetPath('Http.Headers.a b', has), 'Http.Headers');
  assert.equal(v.widgetPath('Http.Headers.X.Y', has), 'Http.Headers');
  assert.equal(v.widgetPath('Http.Url', has), 'Http.Url');
  assert.equal(v.widgetPath('Nowhere.Else', has), null);
});

test("an object's key, a copy's starting values and a create's body", () => {
  assert.equal(v.objectKey(JD, { Name: 'Nightly' }), 'GLOBAL.Nightly');
  assert.equal(v.objectKey(JD, { Partition: 'Finance', Name: 'Ledger' }), 'Finance.Ledger');
  const qp = describeType(requireType('QueueProvider'));
  assert.equal(v.objectKey(qp, { ProcessServer: 'GLOBAL.Local', Queue: 'GLOBAL.Night' }), 'GLOBAL.Local.GLOBAL.Night');
  const partition = describeType(requireType('Partition'));
  assert.equal(v.objectKey(partition, { Name: 'Finance' }), 'Finance');
  const copy = v.copyValues(JD, {
    uniqueId: 7,
    businessKey: 'JobDefinition:GLOBAL.Nightly',
    Name: 'Nightly',
    Partition: 'GLOBAL',
    Script: 'echo',
    CreationTime: '2026/11/26 10:00:00,000 UTC',
  });
  assert.deepEqual(copy, { Name: 'Nightly_copy', Partition: 'GLOBAL', Script: 'echo' });
  assert.deepEqual(v.createBody({ Name: 'A', Description: null, Locks: [], Headers: {}, Priority: 0 }), {
    Name: 'A',
    Priority: 0,
  });
});
