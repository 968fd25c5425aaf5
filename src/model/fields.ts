/**
 * The vocabulary of the object-type registry: field kinds and the small builders each type file uses.
 * Validation, JSON and XML rendering, OpenAPI schemas, CAR entries and reference checks are all derived
 * from these declarations, so adding a field to a type is one line in its file.
 */

export const PRIVILEGES = ['View', 'Create', 'Edit', 'Delete', 'Submit', 'Control', 'Reply'] as const;
export type Privilege = (typeof PRIVILEGES)[number];

/**
 * The object types, in the registry's order (model/registry.ts maps each name to its declaration, and the compiler
 * holds that map to exactly these names).
 */
export const TYPE_NAMES = [
  'Partition',
  'Application',
  'JobDefinition',
  'JobChain',
  'EventDefinition',
  'Event',
  'TimeWindow',
  'SubmitFrame',
  'Queue',
  'QueueProvider',
  'ProcessServer',
  'Lock',
  'ProcessServerAlertSource',
  'JobDefinitionAlertSource',
  'AlertEscalation',
  'Alert',
  'Deadline',
  'OperatorMessage',
  'UserMessage',
  'Job',
  'JobFile',
  'Credential',
  'ImportRuleSet',
  'Library',
] as const;
export type TypeName = (typeof TYPE_NAMES)[number];

/** One line of text. */
export interface StringKind {
  readonly kind: 'string';
  readonly maxLength: number;
  readonly pattern?: RegExp;
  readonly patternText?: string;
}
/** Free text that may span lines (scripts, notes). */
export interface TextKind {
  readonly kind: 'text';
  readonly maxLength: number;
}
export interface NumberKind {
  readonly kind: 'number';
  readonly integer: boolean;
  readonly min?: number;
  readonly max?: number;
}
export interface BooleanKind {
  readonly kind: 'boolean';
}
/** An instant, stored as {ms, zone}, written `YYYY/MM/DD HH:MM:SS,mmm <zone>`. */
export interface DateKind {
  readonly kind: 'date';
}
/** An IANA time-zone name. */
export interface TimezoneKind {
  readonly kind: 'timezone';
}
export interface EnumKind<V extends string = string> {
  readonly kind: 'enum';
  readonly values: readonly V[];
}
/** A business key of another object, written `<partition>.<name>` (a bare name means GLOBAL). */
export interface ReferenceKind<T extends TypeName = TypeName> {
  readonly kind: 'reference';
  readonly type: T;
}
/** Write-only: accepted on input, encrypted at rest (a sealed string), never rendered. */
export interface SecretKind {
  readonly kind: 'secret';
  readonly maxLength: number;
}
/** `named`: the field whose value names an item of a list in messages (a parameter by its Name). */
export interface RecordKind<F extends readonly Field[] = readonly Field[]> {
  readonly kind: 'record';
  readonly fields: F;
  readonly named?: string;
}
/** `single`: one item alone is taken as a list of one (input only; a stored list is always a list). */
export interface ListKind<K extends FieldKind = FieldKind> {
  readonly kind: 'list';
  readonly of: K;
  readonly maxItems: number;
  readonly single?: boolean;
}
/**
 * Names mapped to one-line text values, written as a JSON object (`{"Accept": "application/json"}`). Names match
 * `keyPattern` and are distinct ignoring case (as HTTP header names are); the stored value is a plain object whose
 * entries are all own properties, so a name such as `__proto__` is only ever a name.
 */
export interface MapKind {
  readonly kind: 'map';
  readonly maxEntries: number;
  readonly keyPattern: RegExp;
  readonly keyPatternText: string;
  readonly keyMaxLength: number;
  readonly valueMaxLength: number;
}
/** A string or a number, kept as given (input only: an Out value given to updateJob, converted by its parameter). */
export interface ScalarKind {
  readonly kind: 'scalar';
  readonly maxLength: number;
}

export type FieldKind =
  | StringKind
  | TextKind
  | NumberKind
  | BooleanKind
  | DateKind
  | TimezoneKind
  | EnumKind
  | ReferenceKind
  | SecretKind
  | RecordKind
  | ListKind
  | MapKind
  | ScalarKind;

/** What a field declares besides its name and kind. */
export interface FieldOptions {
  /** Must be present (non-null) after a create. */
  readonly required?: boolean;
  /** Shown on output, refused on input. */
  readonly readOnly?: boolean;
  /** Computed on read from other objects; silently ignored on input. */
  readonly derived?: boolean;
  /** Value given on create when the body leaves the field out. */
  readonly default?: unknown;
  readonly description?: string;
}

/** A field; `N` and `K` keep its name and kind literal so that the data of a type can be typed from its fields. */
export interface Field<N extends string = string, K extends FieldKind = FieldKind> extends FieldOptions {
  readonly name: N;
  readonly kind: K;
}

export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,79}$/;
export const NAME_PATTERN_TEXT = 'letters, digits and _, starting with a letter or _, at most 80 characters';

// Builders. They keep the type files short and uniform, and keep each kind's literal type (model/data.ts reads it).
export const string = (maxLength = 255, pattern?: RegExp, patternText?: string): StringKind => ({
  kind: 'string',
  maxLength,
  ...(pattern ? { pattern, patternText: patternText ?? pattern.source } : {}),
});
export const name = (): StringKind => string(80, NAME_PATTERN, NAME_PATTERN_TEXT);
export const text = (maxLength = 1_000_000): TextKind => ({ kind: 'text', maxLength });
export const int = (min?: number, max?: number): NumberKind => ({ kind: 'number', integer: true, min, max });
export const decimal = (min?: number, max?: number): NumberKind => ({ kind: 'number', integer: false, min, max });
export const bool = (): BooleanKind => ({ kind: 'boolean' });
export const date = (): DateKind => ({ kind: 'date' });
export const timezone = (): TimezoneKind => ({ kind: 'timezone' });
export const oneOf = <const V extends string>(...values: V[]): EnumKind<V> => ({ kind: 'enum', values });
export const ref = <T extends TypeName>(type: T): ReferenceKind<T> => ({ kind: 'reference', type });
export const secret = (maxLength = 1024): SecretKind => ({ kind: 'secret', maxLength });
export const record = <const F extends readonly Field[]>(...fields: F): RecordKind<F> => ({ kind: 'record', fields });
/** A record whose items in a list are named in messages by the value of the field `named`. */
export const namedRecord = <const F extends readonly Field[]>(named: string, ...fields: F): RecordKind<F> => ({
  kind: 'record',
  fields,
  named,
});
export const list = <K extends FieldKind>(of: K, maxItems = 1000): ListKind<K> => ({ kind: 'list', of, maxItems });
export const listOrOne = <K extends FieldKind>(of: K, maxItems = 1000): ListKind<K> => ({
  kind: 'list',
  of,
  maxItems,
  single: true,
});
/** The characters of an HTTP header name (a token: letters, digits and !#$%&'*+-.^_`|~). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
export const HEADER_NAME_TEXT = "letters, digits and !#$%&'*+-.^_`|~ (an HTTP header name)";
export const map = (
  maxEntries: number,
  keyPattern: RegExp,
  keyPatternText: string,
  valueMaxLength: number,
  keyMaxLength = 255,
): MapKind => ({ kind: 'map', maxEntries, keyPattern, keyPatternText, keyMaxLength, valueMaxLength });
export const scalar = (maxLength = 4000): ScalarKind => ({ kind: 'scalar', maxLength });

export function field<const N extends string, K extends FieldKind>(fieldName: N, kind: K): Field<N, K>;
export function field<const N extends string, K extends FieldKind, const O extends FieldOptions>(
  fieldName: N,
  kind: K,
  options: O,
): Field<N, K> & O;
export function field(fieldName: string, kind: FieldKind, options: FieldOptions = {}): Field {
  return { name: fieldName, kind, ...options };
}

/** The five final statuses that restart behaviour and status handlers react to. */
export const HANDLED_FINAL_STATUSES = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'] as const;

// The statuses are the domain's (docs/architecture.md §6); the registry declares the Job's Status field with them.
export { JOB_STATUS_NAMES, JOB_STATUSES, type JobStatus } from '../domain/job-status.ts';
