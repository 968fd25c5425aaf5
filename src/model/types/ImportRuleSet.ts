import { field, list, name, record, ref, string } from '../fields.ts';
import { defineType } from '../object-type.ts';

/**
 * Decides which objects of a CAR are imported and how they change on the way in. An object is
 * imported when it matches an Includes pattern (or Includes is empty) and no Excludes pattern. Its partition then
 * becomes the `To` of the mapping whose `From` names it, else TargetPartition when set. PropertyOverrides are applied
 * last, in order, to objects of a matching type that have the field.
 */
const OBJECT_GLOB = /^[A-Za-z*?]+:[A-Za-z0-9_*?.%]+$/;
const objectGlob = () =>
  string(
    255,
    OBJECT_GLOB,
    '<Type>:<partition>.<name> with the wildcards * and ?, such as JobDefinition:GLOBAL.Load_* or Queue:*',
  );

export default defineType({
  name: 'ImportRuleSet',
  description: 'Which objects of a CAR to import, into which partitions, with which changes.',
  key: 'partitioned',
  fields: [
    field('TargetPartition', ref('Partition'), { description: 'Partition for objects no mapping names.' }),
    field(
      'PartitionMappings',
      list(record(field('From', name(), { required: true }), field('To', name(), { required: true })), 100),
      { default: [] },
    ),
    field('Includes', list(objectGlob(), 500), { default: [], description: 'Empty: every object.' }),
    field('Excludes', list(objectGlob(), 500), { default: [] }),
    field(
      'PropertyOverrides',
      list(
        record(
          field('TypePattern', string(80, /^[A-Za-z*?]+$/, 'a type name with the wildcards * and ?'), {
            required: true,
          }),
          field('Field', name(), { required: true }),
          field('Value', string(4000), { description: 'Written as in the JSON interface; null empties the field.' }),
        ),
        100,
      ),
      { default: [] },
    ),
  ],
  rules: (v) => {
    const seen = new Set<unknown>();
    for (const [i, m] of (v.PartitionMappings ?? []).entries()) {
      if (seen.has(m.From)) return `Field "PartitionMappings[${i}].From": partition ${m.From} is mapped twice`;
      seen.add(m.From);
    }
    return undefined;
  },
});
