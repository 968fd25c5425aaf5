import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyOrder,
  currentOf,
  diff,
  exportDocument,
  parseFile,
  toManifest,
} from '../../../src/cli/client/manifest.ts';
import type { TypeName } from '../../../src/model/fields.ts';
import { keyShapeOf, requireType } from '../../../src/model/registry.ts';
import { renderObject } from '../../../src/model/render.ts';
import { validateObjectBody } from '../../../src/model/validate.ts';

/** `millrace apply`'s pure part: files → objects, wanted state vs the server's rendering, order, export. */

/** An object as the server renders it after a create with `body` (the real validation fills the defaults). */
function rendered(type: TypeName, key: string, body: Record<string, unknown>): Record<string, unknown> {
  const t = requireType(type);
  const data = validateObjectBody(t, body, { mode: 'create', defaultZone: 'UTC', keyShapeOf });
  const [partition, name] = key.split('.');
  Object.assign(data, { Partition: partition, Name: name });
  return renderObject(t, { uniqueId: 7, businessKey: `${type}:${key}` }, data);
}

test('YAML documents and JSON lists both read; bare references are canonical; left-out fields are defaults', () => {
  const [queue, def] = parseFile(
    'Type: Queue\nKey: Nightly\nExecutionSize: 2\n---\nType: JobDefinition\nKey: ETL.Load\nDefaultQueue: Nightly\n',
    'a.yaml',
  );
  assert.equal(queue?.key, 'GLOBAL.Nightly');
  assert.equal(def?.desired.DefaultQueue, 'GLOBAL.Nightly');
  assert.equal(def?.desired.Priority, 50);
  assert.equal(def?.partition, 'ETL');
  const fromJson = parseFile('[{"Type": "Partition", "Key": "ETL"}, {"Type": "Queue", "Key": "ETL.Q"}]', 'b.json');
  assert.deepEqual(
    fromJson.map((m) => `${m.type.name}:${m.key}@${m.source}`),
    ['Partition:ETL@b.json[0]', 'Queue:ETL.Q@b.json[1]'],
  );
});

test('a file the registry refuses names the file, the object and the field', () => {
  const bad = (text: string, message: RegExp) => assert.throws(() => parseFile(text, 'x.yaml'), message);
  bad('Type: Nope\nKey: A\n', /^Error: x\.yaml#1: Type Nope cannot be applied; one of Partition, /);
  bad('Type: Job\nKey: "1"\n', /Type Job cannot be applied/);
  bad('Type: Queue\nKey: a.b.c\n', /x\.yaml#1: Key "a\.b\.c" is not a Queue key <partition>\.<name>/);
  bad(
    'Type: Queue\nKey: Q\nExecutionSise: 3\n',
    /x\.yaml#1 \(Queue GLOBAL\.Q\): ExecutionSise is not a field of Queue/,
  );
  bad('Type: Queue\nKey: Q\nCreationTime: x\n', /CreationTime is set by the server/);
  bad('Type: Queue\nKey: Q\nName: Other\n', /Name must match the Key \(Q\)/);
  bad('Type: Queue\nKey: [\n', /^Error: x\.yaml: /);
  assert.throws(() => toManifest([1], 'y.json'), /y\.json: an object must be a mapping with Type and Key/);
});

test('an object as the server renders it equals its file: nothing to change; a field changed by hand is found', () => {
  const body = {
    Script: 'echo one\necho two',
    Parameters: [{ Name: 'WHO', DefaultValue: 'world' }],
    RestartBehaviour: { Error: 'Restart' },
    DefaultQueue: 'Nightly',
  };
  const server = rendered('JobDefinition', 'GLOBAL.Hello', body);
  const m = toManifest({ Type: 'JobDefinition', Key: 'Hello', ...body }, 'h.json');
  assert.deepEqual(diff(currentOf(m.type, server), m.desired), []);
  const byHand = { ...server, Priority: 80 };
  assert.deepEqual(diff(currentOf(m.type, byHand), m.desired), [{ field: 'Priority', before: 80, after: 50 }]);
});

test('def export writes what apply reads back to the same object, without what GET adds', () => {
  const chain = rendered('JobChain', 'ETL.Flow', {
    Steps: [{ Name: 'A', Calls: [{ JobDefinition: 'ETL.Load', ParameterMappings: [{ Parameter: 'X', Value: '1' }] }] }],
  });
  const def = rendered('JobDefinition', 'ETL.Flow', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
  for (const [type, object] of [
    ['JobChain', chain],
    ['JobDefinition', def],
  ] as const) {
    const doc = exportDocument(requireType(type), object);
    for (const added of ['uniqueId', 'businessKey', 'CreationTime', 'LastModificationTime', 'Name', 'Partition'])
      assert.equal(added in doc, false, `${type} export leaves out ${added}`);
    const m = toManifest(doc, 'export');
    assert.equal(m.key, 'ETL.Flow');
    assert.deepEqual(diff(currentOf(m.type, object), m.desired), [], `${type} reads back to the same object`);
  }
  // Defaults are left out, so the file holds what was chosen.
  assert.deepEqual(exportDocument(requireType('JobDefinition'), def), {
    Type: 'JobDefinition',
    Key: 'ETL.Flow',
    JobDefinitionType: 'JobChain',
    DefaultQueue: 'GLOBAL.System',
  });
});

test('apply order: what an object refers to comes first, whatever the files’ order; a circle is refused', () => {
  const ms = parseFile(
    [
      'Type: JobChain\nKey: E.Flow\nSteps: [{Name: S, Calls: [{JobDefinition: E.Load}]}]',
      'Type: JobDefinition\nKey: E.Load\nDefaultQueue: E.Q\nTimeWindow: E.Office',
      'Type: TimeWindow\nKey: E.Office\nEnabledDuring: E.Weekdays',
      'Type: TimeWindow\nKey: E.Weekdays',
      'Type: Queue\nKey: E.Q',
      'Type: JobDefinition\nKey: E.Flow\nJobDefinitionType: JobChain',
      'Type: Partition\nKey: E',
    ].join('\n---\n'),
    'o.yaml',
  );
  const order = applyOrder(ms).map((m) => `${m.type.name}:${m.key}`);
  const before = (a: string, b: string) => assert.ok(order.indexOf(a) < order.indexOf(b), `${a} before ${b}: ${order}`);
  assert.equal(order[0], 'Partition:E');
  before('TimeWindow:E.Weekdays', 'TimeWindow:E.Office');
  before('TimeWindow:E.Office', 'JobDefinition:E.Load');
  before('Queue:E.Q', 'JobDefinition:E.Load');
  before('JobDefinition:E.Load', 'JobChain:E.Flow');
  before('JobDefinition:E.Flow', 'JobChain:E.Flow');
  const circle = parseFile(
    'Type: TimeWindow\nKey: A\nEnabledDuring: B\n---\nType: TimeWindow\nKey: B\nDisabledDuring: A\n',
    'c.yaml',
  );
  assert.throws(
    () => applyOrder(circle),
    /refer to each other in a circle: TimeWindow:GLOBAL\.A, TimeWindow:GLOBAL\.B/,
  );
});

test('what refers to a chain given only as its JobChain waits for it: creating the JobChain creates its definition', () => {
  const ms = parseFile(
    [
      'Type: Deadline\nKey: D.By6\nJobDefinition: D.Nightly\nEndBy: "06:00"',
      'Type: JobChain\nKey: D.Outer\nSteps: [{Name: S, Calls: [{JobDefinition: D.Nightly}]}]',
      'Type: JobChain\nKey: D.Nightly\nSteps: []',
    ].join('\n---\n'),
    'd.yaml',
  );
  const order = applyOrder(ms).map((m) => `${m.type.name}:${m.key}`);
  assert.ok(order.indexOf('JobChain:D.Nightly') < order.indexOf('Deadline:D.By6'), String(order));
  assert.ok(order.indexOf('JobChain:D.Nightly') < order.indexOf('JobChain:D.Outer'), String(order));
});
