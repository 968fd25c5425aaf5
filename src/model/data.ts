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

type ItemOf<V> = V extends readonly (infer I)[] ? I : V;
type Inner<T extends TypeName, F extends keyof DataOf<T>> = ItemOf<NonNullable<DataOf<T>[F]>>;

/**
 * The default a type declares for one of its fields, or for a field of the records a field holds (a list's items
 * included): what a reader uses when stored data holds null or nothing there, so the value is written once, in the
 * declaration. A field without a default is a bug, thrown at once.
 */
export function fieldDefault<T extends TypeName, F extends keyof DataOf<T> & string>(
  type: T,
  name: F,
): NonNullable<DataOf<T>[F]>;
export function fieldDefault<
  T extends TypeName,
  F extends keyof DataOf<T> & string,
  G extends keyof Inner<T, F> & string,
>(type: T, name: F, inner: G): NonNullable<Inner<T, F>[G]>;
export function fieldDefault<
  T extends TypeName,
  F extends keyof DataOf<T> & string,
  G extends keyof Inner<T, F> & string,
  H extends keyof ItemOf<NonNullable<Inner<T, F>[G]>> & string,
>(type: T, name: F, inner: G, innermost: H): NonNullable<ItemOf<NonNullable<Inner<T, F>[G]>>[H]>;
export function fieldDefault(type: TypeName, name: string, ...path: string[]): unknown {
  let found = requireType(type).byName.get(name);
  for (const inner of path) {
    const kind = found?.kind.kind === 'list' ? found.kind.of : found?.kind;
    found = kind?.kind === 'record' ? kind.fields.find((f) => f.name === inner) : undefined;
  }
  if (found?.default === undefined)
    throw new Error(`the ${type} type declares no default for ${[name, ...path].join('.')}`);
  return found.default;
}
