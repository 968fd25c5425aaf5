/**
 * Names that come from outside (a body's field, a parameter's name, a placeholder in a text, a profile's name)
 * are looked up and stored only as own properties: a plain object answers a lookup of `constructor`, `toString`
 * or `__proto__` with what every object inherits, as if the name were there, and ignores `__proto__` when set.
 */

/** The value `record` holds under `name` itself; undefined when it holds none (an inherited one does not count). */
export function own<T>(record: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** An empty record without a prototype: every name set on it, `__proto__` included, is its own property. */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
