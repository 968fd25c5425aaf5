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

export type FieldKind =
  /** One line of text. */
  | { kind: 'string'; maxLength: number; pattern?: RegExp; patternText?: string }
  /** Free text that may span lines (scripts, notes). */
  | { kind: 'text'; maxLength: number }
  | { kind: 'number'; integer: boolean; min?: number; max?: number }
  | { kind: 'boolean' }
  /** An instant, stored as {ms, zone}, written `YYYY/MM/DD HH:MM:SS,mmm <zone>`. */
  | { kind: 'date' }
  /** An IANA time-zone name. */
  | { kind: 'timezone' }
  | { kind: 'enum'; values: readonly string[] }
  /** A business key of another object, written `<partition>.<name>` (a bare name means GLOBAL). */
  | { kind: 'reference'; type: TypeName }
  /** Write-only: accepted on input, encrypted at rest, never rendered. */
  | { kind: 'secret'; maxLength: number }
  /** `named`: the field whose value names an item of a list in messages (a parameter by its Name). */
  | { kind: 'record'; fields: readonly Field[]; named?: string }
  /** `single`: one item alone is taken as a list of one (input only; a stored list is always a list). */
  | { kind: 'list'; of: FieldKind; maxItems: number; single?: boolean }
  /** A string or a number, kept as given (input only: an Out value given to updateJob, converted by its parameter). */
  | { kind: 'scalar'; maxLength: number };

export interface Field {
  readonly name: string;
  readonly kind: FieldKind;
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

export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,79}$/;
export const NAME_PATTERN_TEXT = 'letters, digits and _, starting with a letter or _, at most 80 characters';

// Builders. They keep the type files short and uniform.
export const string = (maxLength = 255, pattern?: RegExp, patternText?: string): FieldKind => ({
  kind: 'string',
  maxLength,
  ...(pattern ? { pattern, patternText: patternText ?? pattern.source } : {}),
});
export const name = (): FieldKind => string(80, NAME_PATTERN, NAME_PATTERN_TEXT);
export const text = (maxLength = 1_000_000): FieldKind => ({ kind: 'text', maxLength });
export const int = (min?: number, max?: number): FieldKind => ({ kind: 'number', integer: true, min, max });
export const decimal = (min?: number, max?: number): FieldKind => ({ kind: 'number', integer: false, min, max });
export const bool = (): FieldKind => ({ kind: 'boolean' });
export const date = (): FieldKind => ({ kind: 'date' });
export const timezone = (): FieldKind => ({ kind: 'timezone' });
export const oneOf = (...values: string[]): FieldKind => ({ kind: 'enum', values });
export const ref = (type: TypeName): FieldKind => ({ kind: 'reference', type });
export const secret = (maxLength = 1024): FieldKind => ({ kind: 'secret', maxLength });
export const record = (...fields: Field[]): FieldKind => ({ kind: 'record', fields });
/** A record whose items in a list are named in messages by the value of the field `named`. */
export const namedRecord = (named: string, ...fields: Field[]): FieldKind => ({ kind: 'record', fields, named });
export const list = (of: FieldKind, maxItems = 1000): FieldKind => ({ kind: 'list', of, maxItems });
export const listOrOne = (of: FieldKind, maxItems = 1000): FieldKind => ({ kind: 'list', of, maxItems, single: true });
export const scalar = (maxLength = 4000): FieldKind => ({ kind: 'scalar', maxLength });

export const field = (fieldName: string, kind: FieldKind, options: Omit<Field, 'name' | 'kind'> = {}): Field => ({
  name: fieldName,
  kind,
  ...options,
});

/** The five final statuses that restart behaviour and status handlers react to. */
export const HANDLED_FINAL_STATUSES = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'] as const;

// The statuses are the domain's (docs/architecture.md §6); the registry declares the Job's Status field with them.
export { JOB_STATUS_NAMES, JOB_STATUSES, type JobStatus } from '../domain/job-status.ts';
