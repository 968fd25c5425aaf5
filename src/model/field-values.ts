import type { ZonedInstant } from '../time/date-format.ts';
import type {
  BooleanKind,
  DateKind,
  EnumKind,
  Field,
  FieldKind,
  ListKind,
  MapKind,
  NumberKind,
  RecordKind,
  ReferenceKind,
  ScalarKind,
} from './fields.ts';

/**
 * The stored form of a value of each field kind, read from the declaration (docs/architecture.md §3): the type of
 * an object's data is made from its field table, never written a second time. References are canonical keys,
 * dates {ms, zone}, secrets the sealed string, records and lists their items' stored forms, maps an object of texts.
 */
export type ValueOf<K extends FieldKind> =
  K extends EnumKind<infer V>
    ? V
    : K extends ReferenceKind
      ? string
      : K extends RecordKind<infer F>
        ? DataOfFields<F>
        : K extends ListKind<infer Of>
          ? ValueOf<Of>[]
          : K extends NumberKind
            ? number
            : K extends BooleanKind
              ? boolean
              : K extends DateKind
                ? ZonedInstant
                : K extends ScalarKind
                  ? string | number
                  : K extends MapKind
                    ? Record<string, string>
                    : string;

type Simplify<T> = { [P in keyof T]: T[P] } & {};
type Required<F> = F extends { readonly required: true } ? true : false;

/**
 * The stored data of a field list: a required field is there and not null after a create; any other may be null
 * (a body may give null for it) or missing (data written before the field existed, runtime objects the engine
 * makes). A list of fields whose names are not literal (built at run time) stays an open record.
 */
export type DataOfFields<F extends readonly Field[]> = string extends F[number]['name']
  ? Record<string, unknown>
  : Simplify<
      {
        -readonly [P in F[number] as Required<P> extends true ? P['name'] : never]: ValueOf<P['kind']>;
      } & {
        -readonly [P in F[number] as Required<P> extends true ? never : P['name']]?: ValueOf<P['kind']> | null;
      }
    >;
