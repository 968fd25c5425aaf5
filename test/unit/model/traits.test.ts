import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TYPE_NAMES } from '../../../src/model/fields.ts';
import { allTypes, requireType } from '../../../src/model/registry.ts';

/**
 * Behaviour that differs by type is declared on the type (its traits), and the list of type names
 * is one list. These check the declarations themselves; what each trait does is tested where it acts (the XML
 * interface's scripts-list and api-libs, CAR export and import, `millrace apply`, the engine's reactions).
 */

test('the registry holds exactly the type names, in their order', () => {
  assert.deepEqual(
    allTypes().map((t) => t.name),
    [...TYPE_NAMES],
  );
});

test('twins name each other, and exactly one of a pair needs the other', () => {
  for (const type of allTypes()) {
    const twin = type.traits.twin;
    if (!twin) continue;
    const back = requireType(twin.type).traits.twin;
    assert.equal(back?.type, type.name, `${twin.type} names ${type.name} back`);
    assert.notEqual(back?.needsIt, twin.needsIt, `${type.name} and ${twin.type}: one needs the other`);
  }
  assert.equal(requireType('JobChain').traits.twin?.type, 'JobDefinition');
  const chainTwin = requireType('JobDefinition').traits.twin;
  assert.equal(chainTwin?.when?.({ JobDefinitionType: 'JobChain' }), true);
  assert.equal(chainTwin?.when?.({ JobDefinitionType: 'BASH' }), false);
});

test('scripts are libraries and definitions whose type runs a script', () => {
  const script = requireType('JobDefinition').traits.script;
  assert.ok(script);
  for (const t of ['BASH', 'SH', 'PYTHON', 'NODE']) assert.equal(script({ JobDefinitionType: t }), true, t);
  for (const t of ['System', 'JobChain', 'UserMessage']) assert.equal(script({ JobDefinitionType: t }), false, t);
  assert.equal(requireType('Library').traits.script?.({}), true);
  assert.deepEqual(
    allTypes()
      .filter((t) => t.traits.script)
      .map((t) => t.name),
    ['JobDefinition', 'Library'],
  );
});
