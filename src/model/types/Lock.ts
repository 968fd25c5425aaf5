import { defineType } from '../object-type.ts';

/** A mutual-exclusion lock: of the jobs whose definitions name it, one runs at a time (the others wait in LockWait). */
export default defineType({
  name: 'Lock',
  description: 'Only one job holding a lock runs at a time; the others wait in LockWait.',
  key: 'partitioned',
  fields: [],
  traits: { onChange: ['dispatch'] },
});
