import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyRules, parseRuleSetProperties, rulesOf } from '../../../src/car/import-rules.ts';

/** Import rules as pure functions: what moves where, what follows, what is left out. */

const objects = [
  { type: 'Queue' as const, key: 'DEV.Batch', body: { Name: 'Batch', Partition: 'DEV', TimeWindow: 'DEV.Nights' } },
  { type: 'TimeWindow' as const, key: 'DEV.Nights', body: { Name: 'Nights', Partition: 'DEV' } },
  {
    type: 'JobDefinition' as const,
    key: 'DEV.Load',
    body: { Name: 'Load', Partition: 'DEV', DefaultQueue: 'GLOBAL.Default', TimeWindow: 'OPS.Hours' },
  },
];

test('a target partition moves every object, and references to objects that moved with them follow', () => {
  const { imported, skipped } = applyRules(objects, rulesOf(undefined, 'PROD', {}));
  assert.deepEqual(skipped, []);
  assert.deepEqual(
    imported.map((o) => o.key),
    ['PROD.Batch', 'PROD.Nights', 'PROD.Load'],
  );
  assert.equal(imported[0]?.body.TimeWindow, 'PROD.Nights');
  assert.equal(imported[0]?.body.Partition, 'PROD');
  assert.equal(imported[2]?.body.DefaultQueue, 'GLOBAL.Default', 'objects not in the archive stay where they are');
  assert.equal(imported[2]?.archiveKey, 'DEV.Load');
});

test('a partition mapping moves its objects and every reference into that partition; the request target wins over the rule set', () => {
  const ruleSet = {
    PartitionMappings: [{ From: 'OPS', To: 'OPS2' }],
    TargetPartition: 'TEST',
    Includes: [],
    Excludes: [],
    PropertyOverrides: [],
  };
  const { imported } = applyRules(objects, rulesOf(ruleSet, null, {}));
  assert.equal(imported[2]?.key, 'TEST.Load');
  assert.equal(imported[2]?.body.TimeWindow, 'OPS2.Hours', 'a reference into a mapped partition follows the mapping');
  assert.equal(applyRules(objects, rulesOf(ruleSet, 'PROD', {})).imported[0]?.key, 'PROD.Batch');
});

test('includes and excludes decide what is imported; overrides take rule-set properties and fit the field', () => {
  const ruleSet = {
    Includes: ['Queue:*', 'TimeWindow:DEV.*'],
    Excludes: ['timewindow:dev.nights'],
    PropertyOverrides: [
      { TypePattern: 'Q*', Field: 'ExecutionSize', Value: '${n}' },
      { TypePattern: 'Queue', Field: 'Held', Value: 'true' },
      { TypePattern: 'Queue', Field: 'Name', Value: 'Renamed' },
      { TypePattern: 'Queue', Field: 'NoSuchField', Value: 'x' },
    ],
  };
  const { imported, skipped } = applyRules(objects, rulesOf(ruleSet, null, { n: '6' }));
  assert.deepEqual(
    imported.map((o) => o.key),
    ['DEV.Batch'],
  );
  assert.deepEqual(
    skipped.map((o) => o.key),
    ['DEV.Nights', 'DEV.Load'],
  );
  assert.equal(imported[0]?.body.ExecutionSize, 6);
  assert.equal(imported[0]?.body.Held, true);
  assert.equal(imported[0]?.body.Name, 'Batch', 'identity fields are never overridden');
  const bad = { ...ruleSet, PropertyOverrides: [{ TypePattern: 'Queue', Field: 'ExecutionSize', Value: 'many' }] };
  assert.throws(() => applyRules(objects, rulesOf(bad, null, {})), /not a number/);
});

test('rule-set properties are <p>=<v> pairs separated by commas', () => {
  assert.deepEqual({ ...parseRuleSetProperties('a=1, b = two ,c=') }, { a: '1', b: 'two', c: '' });
  assert.deepEqual({ ...parseRuleSetProperties(undefined) }, {});
  assert.throws(() => parseRuleSetProperties('no pair'), /not <parameter>=<value>/);
  assert.throws(() => parseRuleSetProperties('1a=x'), /not <parameter>=<value>/);
});
