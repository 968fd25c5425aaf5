import { defineType } from '../object-type.ts';

/** A namespace for objects; privileges are granted per partition. GLOBAL holds the system objects. */
export default defineType({
  name: 'Partition',
  description: 'A namespace for objects; privileges are granted per type and partition.',
  key: 'name',
  fields: [],
});
