import type { DataOfFields } from './field-values.ts';
import type { TypeName } from './fields.ts';
import { type Declarations, requireType } from './registry.ts';

/**
 * The stored data of an object of type `T`, made from the type's field table (docs/architecture.md §3): field names
 * and value kinds come from the declaration alone, so reading a field the type does not declare does not compile.
 */
export type DataOf<T extends TypeName> = T extends TypeName ? DataOfFields<Declarations[T]['fields']> : never;

/** The data of an object whose type is known only at run time (generic create, read, update and delete) is open. */
export type ObjectData<T extends TypeName> = TypeName extends T ? Record<string, unknown> : DataOf<T>;

type FieldsOf<T extends TypeName> = Declarations[T]['fields'][number];

/** The top-level fields of `T` that declare a default. */
export type DefaultedField<T extends TypeName> =
  FieldsOf<T> extends infer F ? (F extends { readonly name: infer N; readonly default: unknown } ? N : never) : never;

/**
 * The default a type declares for one of its fields: what a reader uses when stored data holds null or nothing for
 * it, so the value is written once, in the declaration.
 */
export function fieldDefault<T extends TypeName, F extends DefaultedField<T> & keyof DataOf<T>>(
  type: T,
  name: F,
): NonNullable<DataOf<T>[F]> {
  const declared = requireType(type).byName.get(name)?.default;
  if (declared === undefined) throw new Error(`the ${type} type declares no default for ${name}`);
  // The declaration holds the default beside the field's kind; its stored form is the kind's value (DataOf).
  return declared as NonNullable<DataOf<T>[F]>;
}
