import { defineType } from '../object-type.ts';

/** Groups objects for an application; nests through ParentApplication. */
export default defineType({
  name: 'Application',
  description: 'Groups related objects; applications nest through ParentApplication.',
  key: 'partitioned',
  fields: [],
  rules: (v) =>
    v.ParentApplication !== null && v.ParentApplication === `${v.Partition}.${v.Name}`
      ? 'Field "ParentApplication" cannot name the application itself'
      : undefined,
});
