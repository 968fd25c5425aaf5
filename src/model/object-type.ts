import type { DataOfFields } from './field-values.ts';
import {
  date,
  type Field,
  type FieldKind,
  field,
  name,
  type Privilege,
  ref,
  string,
  text,
  type TypeName,
} from './fields.ts';

/**
 * How an object is named in paths:
 * - `name`: the name alone (Partition).
 * - `partitioned`: `<partition>.<name>`, a bare name meaning GLOBAL.
 * - `queueProvider`: `<ps_partition>.<ps_name>.<queue_partition>.<queue_name>`.
 * - `numeric`: a positive integer (jobs, job files, messages, alerts).
 * - `eventId`: `<event_definition_name><raise_sequence>`.
 */
export type KeyShape = 'name' | 'partitioned' | 'queueProvider' | 'numeric' | 'eventId';

/**
 * A request body that is not the object itself (a Job's submit, process-properties and completion bodies): its
 * fields, validated by the registry (model/validate.ts `validateForm`) and documented from the same declaration.
 */
export interface Form {
  /** Its schema's id in the OpenAPI document (`JobSubmit`). */
  readonly id: string;
  readonly description: string;
  readonly fields: readonly Field[];
  readonly byName: ReadonlyMap<string, Field>;
}

export const defineForm = (id: string, description: string, fields: Field[]): Form => ({
  id,
  description,
  fields,
  byName: new Map(fields.map((f) => [f.name, f])),
});

/**
 * What a type does beyond its fields, declared with it so that services, the engine and the CLI ask the type
 * rather than compare type names. Each trait names a behaviour; the code that carries it out lives where the
 * behaviour belongs (the model stays pure).
 */
export interface TypeTraits {
  /**
   * The object of this other type with the same key travels with it: exported with it, imported and applied after
   * it (docs/architecture.md §3: a chain is a JobDefinition and a JobChain of one key). `when`: only when the
   * object's own data says so.
   */
  readonly twin?: {
    readonly type: TypeName;
    readonly needsIt: boolean;
    readonly when?: (data: Record<string, unknown>) => boolean;
    /** Creating an object of this type creates the twin it needs, with these fields, when there is none. */
    readonly madeWith?: Readonly<Record<string, unknown>>;
  };
  /** The kind of blob holding its files (a Library's jars): deleted with it, exported with it, served by api-libs. */
  readonly files?: 'library';
  /** Runtime objects made from it that are deleted with it (an EventDefinition's events). */
  readonly owns?: 'Event';
  /** A script the XML interface's scripts-list offers: a library, a definition whose type runs a script. */
  readonly script?: (data: Record<string, unknown>) => boolean;
  /**
   * What the engine does when an object of the type changes: dispatch again (a window, a lock, a queue …), reload
   * the alert sources or the deadlines, or move the queue's waiting jobs in or out of QueueHeld when its Held flag
   * changes, or tell the agents named by an event definition's file watches what to watch.
   */
  readonly onChange?: ReadonlyArray<'dispatch' | 'alert-sources' | 'deadlines' | 'queue-hold' | 'file-watches'>;
}

export type Storage = 'definition' | 'runtime';

/** Every field of a type in output order, as `defineType` puts them together (for the type of its data). */
export type AllFields<K extends KeyShape, S extends Storage, F extends readonly Field[]> = S extends 'runtime'
  ? F
  : readonly [...IdentityFields<K>, ...F, ...typeof META];

export interface ObjectType<
  N extends TypeName = TypeName,
  F extends readonly Field[] = readonly Field[],
  K extends KeyShape = KeyShape,
  S extends Storage = Storage,
> {
  readonly name: N;
  readonly description: string;
  readonly key: K;
  /**
   * `definition` objects are kept in the generic object store and get create/read/update/delete routes.
   * `runtime` objects (jobs, events, messages, alerts, job files) are made by the engine, live in their own
   * tables and get their routes from the capability that owns them.
   */
  readonly storage: S;
  /** Every field in output order, identity and read-only fields included. */
  readonly fields: F;
  /** The fields that the key in the path fixes; a body may repeat them only with the same value. */
  readonly identity: readonly string[];
  /** Privileges that mean something for this type (role grants are checked against this list). */
  readonly privileges: readonly Privilege[];
  /** Cross-field rules, run after the fields are valid one by one; return a message naming the field. */
  rules?(value: DataOfFields<F>): string | undefined;
  /** Look-up by field name. */
  readonly byName: ReadonlyMap<string, Field>;
  /** Bodies of its own that requests take (the Job: submit, properties, completion), by name. */
  readonly forms: Readonly<Record<string, Form>>;
  readonly traits: TypeTraits;
}

interface TypeDeclaration<N extends TypeName, F extends readonly Field[], K extends KeyShape, S extends Storage> {
  name: N;
  description: string;
  key: K;
  storage?: S;
  fields: F;
  privileges?: Privilege[];
  rules?: (value: DataOfFields<AllFields<K, S, F>>) => string | undefined;
  forms?: Record<string, Form>;
  traits?: TypeTraits;
}

const COMMENT = field('Comment', text(4000), { description: 'Free comment.' });
const DESCRIPTION = field('Description', string(255), { description: 'Shown instead of the name when set.' });
const META = [
  field('CreationTime', date(), { readOnly: true }),
  field('LastModificationTime', date(), { readOnly: true }),
] as const;

const NAMED = [COMMENT, DESCRIPTION, field('Name', name(), { required: true })] as const;
const PARTITIONED = [
  COMMENT,
  DESCRIPTION,
  field('Name', name(), { required: true }),
  field('Partition', ref('Partition'), { required: true }),
  field('ParentApplication', ref('Application')),
] as const;
const PROVIDED = [
  COMMENT,
  DESCRIPTION,
  field('ProcessServer', ref('ProcessServer'), { required: true }),
  field('Queue', ref('Queue'), { required: true }),
] as const;

/** The common fields a definition type gets before its own, by its key shape. */
type IdentityFields<K extends KeyShape> = K extends 'name'
  ? typeof NAMED
  : K extends 'partitioned'
    ? typeof PARTITIONED
    : K extends 'queueProvider'
      ? typeof PROVIDED
      : readonly [];

const identityFields = (key: KeyShape): { fields: readonly Field[]; identity: string[] } => {
  switch (key) {
    case 'name':
      return { fields: NAMED, identity: ['Name'] };
    case 'partitioned':
      return { fields: PARTITIONED, identity: ['Partition', 'Name'] };
    case 'queueProvider':
      return { fields: PROVIDED, identity: ['ProcessServer', 'Queue'] };
    default:
      return { fields: [], identity: [] };
  }
};

/** Declares a type: definition types get the common named-object fields and the read-only times around theirs. */
export function defineType<
  const N extends TypeName,
  const F extends readonly Field[],
  const K extends KeyShape,
  const S extends Storage = 'definition',
>(decl: TypeDeclaration<N, F, K, S>): ObjectType<N, AllFields<K, S, F>, K, S> {
  const storage = decl.storage ?? 'definition';
  const ident = storage === 'definition' ? identityFields(decl.key) : { fields: [], identity: [] };
  const fields = storage === 'definition' ? [...ident.fields, ...decl.fields, ...META] : decl.fields;
  const byName = new Map(fields.map((f) => [f.name, f]));
  if (byName.size !== fields.length) throw new Error(`type ${decl.name} declares a field twice`);
  const type: ObjectType<N, readonly Field[], K> = {
    name: decl.name,
    description: decl.description,
    key: decl.key,
    storage,
    fields,
    identity: ident.identity,
    privileges: decl.privileges ?? ['View', 'Create', 'Edit', 'Delete'],
    rules: decl.rules,
    byName,
    forms: decl.forms ?? {},
    traits: decl.traits ?? {},
  };
  // The one place the field list's literal type is attached: the list is built above from exactly those parts.
  return type as ObjectType<N, AllFields<K, S, F>, K, S>;
}

/** Walks a kind, calling `visit` for each reference kind found (used for schemas and reference checks). */
export function kindHasReferences(kind: FieldKind): boolean {
  switch (kind.kind) {
    case 'reference':
      return true;
    case 'record':
      return kind.fields.some((f) => kindHasReferences(f.kind));
    case 'list':
      return kindHasReferences(kind.of);
    default:
      return false;
  }
}
